#ifndef CDIRECTIO_SHIM_H
#define CDIRECTIO_SHIM_H
// O_DIRECT (write around the page cache) and fallocate's FALLOC_FL_INSERT_RANGE and _COLLAPSE_RANGE are declared only under _GNU_SOURCE,
// which Swift's Glibc module is built without, and their values differ between platforms: this header hands them
// over (O_DIRECT as 0, and an insert or collapse that fails with ENOTSUP, where the platform has none).
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#ifdef __linux__
#include <linux/falloc.h>
#endif
#ifdef O_DIRECT
static const int ferry_o_direct = O_DIRECT;
#else
static const int ferry_o_direct = 0;
#endif

/// Shifts the file's bytes from `offset` on up by `length` bytes, leaving a hole (ext4 and XFS, with `offset` and
/// `length` multiples of the filesystem's block size); returns 0, or -1 with errno set.
static inline int ferry_insert_range(int fd, long long offset, long long length) {
#if defined(__linux__) && defined(FALLOC_FL_INSERT_RANGE)
    return fallocate(fd, FALLOC_FL_INSERT_RANGE, (off_t)offset, (off_t)length);
#else
    (void)fd; (void)offset; (void)length;
    errno = ENOTSUP;
    return -1;
#endif
}

/// Takes `length` bytes out of the file at `offset`, shifting what follows down (ext4 and XFS, with both multiples of
/// the filesystem's block size, and the range ending before the file does); returns 0, or -1 with errno set.
static inline int ferry_collapse_range(int fd, long long offset, long long length) {
#if defined(__linux__) && defined(FALLOC_FL_COLLAPSE_RANGE)
    return fallocate(fd, FALLOC_FL_COLLAPSE_RANGE, (off_t)offset, (off_t)length);
#else
    (void)fd; (void)offset; (void)length;
    errno = ENOTSUP;
    return -1;
#endif
}

/// Copies up to `length` bytes of one file into another in the kernel (`copy_file_range`), from and to the given
/// offsets; returns the bytes copied, or -1 with errno set (ENOSYS where the platform has no such call).
static inline long long ferry_copy_range(int from, long long fromOffset, int to, long long toOffset, long long length) {
#if defined(__linux__)
    off_t in = (off_t)fromOffset, out = (off_t)toOffset;
    return (long long)copy_file_range(from, &in, to, &out, (size_t)length, 0);
#else
    (void)from; (void)fromOffset; (void)to; (void)toOffset; (void)length;
    errno = ENOSYS;
    return -1;
#endif
}
#endif
