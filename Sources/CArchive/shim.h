#ifndef CARCHIVE_SHIM_H
#define CARCHIVE_SHIM_H
#include <archive.h>
#include <archive_entry.h>

// AE_IFREG and friends are cast macros ((__LA_MODE_T)0100000) that Swift cannot import.
static const unsigned int CArchive_AE_IFREG = AE_IFREG;
static const unsigned int CArchive_AE_IFDIR = AE_IFDIR;
static const unsigned int CArchive_AE_IFLNK = AE_IFLNK;
static const unsigned int CArchive_AE_IFMT = AE_IFMT;
#endif
