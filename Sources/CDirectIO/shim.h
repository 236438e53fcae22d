#ifndef CDIRECTIO_SHIM_H
#define CDIRECTIO_SHIM_H
// O_DIRECT (write around the page cache) is declared only under _GNU_SOURCE, which Swift's Glibc module is built
// without, and its value differs between architectures: this header hands it over as a constant (0 where the
// platform has none, which turns direct writes off).
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#ifdef O_DIRECT
static const int ferry_o_direct = O_DIRECT;
#else
static const int ferry_o_direct = 0;
#endif
#endif
