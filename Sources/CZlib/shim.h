#ifndef CZLIB_SHIM_H
#define CZLIB_SHIM_H
#include <zlib.h>

// inflateInit2 is a macro Swift cannot import; raw DEFLATE (no zlib header) uses negative window bits.
static inline int CZlib_inflateInitRaw(z_streamp stream) {
    return inflateInit2(stream, -15);
}

// A gzip stream (RFC 1952): 15 window bits plus 16 for the gzip wrapper.
static inline int CZlib_inflateInitGzip(z_streamp stream) {
    return inflateInit2(stream, 15 + 16);
}
#endif
