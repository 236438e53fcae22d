#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H
// sqlite3_config is variadic, which Swift cannot call: this wraps the one setting Ferry makes.
#include <sqlite3.h>

/// Stops SQLite from keeping memory statistics, which takes a global mutex on every allocation and free (a tenth of
/// a local store's write time). Must run before SQLite is first used; returns SQLITE_MISUSE after that.
static inline int ferry_sqlite3_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
#endif
