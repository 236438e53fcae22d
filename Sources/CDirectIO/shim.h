#ifndef CDIRECTIO_SHIM_H
#define CDIRECTIO_SHIM_H
// O_DIRECT (write around the page cache), fallocate's modes that shift blocks and copy_file_range are declared only
// under _GNU_SOURCE, which Swift's Glibc module is built without, and their values differ between platforms: this
// header hands them over (O_DIRECT as 0, and calls that fail with ENOTSUP or ENOSYS, where the platform has none).
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

// fallocate's modes that shift a file's blocks: INSERT_RANGE moves the bytes from an offset on up by a length,
// leaving a hole; COLLAPSE_RANGE takes a length out at an offset, moving what follows down. Only ext4 and XFS, with
// offsets and lengths multiples of the filesystem's block size (and a collapse ending before the file does).
#if defined(__linux__) && defined(FALLOC_FL_INSERT_RANGE) && defined(FALLOC_FL_COLLAPSE_RANGE)
static const int ferry_insert_range = FALLOC_FL_INSERT_RANGE;
static const int ferry_collapse_range = FALLOC_FL_COLLAPSE_RANGE;
#else
static const int ferry_insert_range = -1;
static const int ferry_collapse_range = -1;
#endif

/// Shifts a file's blocks with one of the modes above; returns 0, or -1 with errno set (ENOTSUP where the platform
/// cannot).
static inline int ferry_shift_range(int fd, int mode, long long offset, long long length) {
#if defined(__linux__)
    if (mode >= 0) return fallocate(fd, mode, (off_t)offset, (off_t)length);
#endif
    (void)fd; (void)mode; (void)offset; (void)length;
    errno = ENOTSUP;
    return -1;
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
