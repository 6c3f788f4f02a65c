#ifndef FEEDINGEST_CSQLITE_SHIM_H
#define FEEDINGEST_CSQLITE_SHIM_H
#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import.
static inline sqlite3_destructor_type CSQLite_transient(void) { return SQLITE_TRANSIENT; }

// SQLITE_STATIC is a macro too; Swift needs it as a value to bind borrowed buffers.
static inline sqlite3_destructor_type CSQLite_static(void) { return SQLITE_STATIC; }

// sqlite3_config is variadic: one typed wrapper for the single-int options (e.g. SQLITE_CONFIG_MULTITHREAD).
static inline int CSQLite_config_none(int option) { return sqlite3_config(option); }

// The (int) options of sqlite3_config, such as SQLITE_CONFIG_MEMSTATUS.
static inline int CSQLite_config_int(int option, int value) { return sqlite3_config(option, value); }

// sqlite3_db_config is variadic: typed wrapper for the (int, int*) options such as SQLITE_DBCONFIG_DEFENSIVE.
static inline int CSQLite_db_config_int(sqlite3 *db, int option, int value, int *result) {
    return sqlite3_db_config(db, option, value, result);
}
#endif
