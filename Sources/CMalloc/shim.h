#ifndef CMALLOC_SHIM_H
#define CMALLOC_SHIM_H
// glibc's malloc_trim (hand freed heap memory back to the system) is not in Swift's Glibc module.
#include <stdlib.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#endif
