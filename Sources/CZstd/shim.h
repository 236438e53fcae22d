#ifndef CZSTD_SHIM_H
#define CZSTD_SHIM_H
// Zstandard's streaming API with its advanced parameters: libarchive's zstd filter cannot set a multi-threaded
// job's size, which decides the compressor's memory (engineering.md §2 for the libarchive side).
#include <zstd.h>
#endif
