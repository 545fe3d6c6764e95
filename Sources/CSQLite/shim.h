/* The system libsqlite3 for the HTTP cache's store. SQLITE_TRANSIENT is a cast macro Swift cannot
 * import: these typed wrappers pass it. static inline: compiled in, never exported. */
#ifndef HC_CSQLITE_SHIM_H
#define HC_CSQLITE_SHIM_H

#include <sqlite3.h>

static inline int hc_sqlite3_bind_blob_copy(sqlite3_stmt *s, int i, const void *p, int n) {
    return sqlite3_bind_blob(s, i, p, n, SQLITE_TRANSIENT);
}
static inline int hc_sqlite3_bind_text_copy(sqlite3_stmt *s, int i, const char *p) {
    return sqlite3_bind_text(s, i, p, -1, SQLITE_TRANSIENT);
}

#endif
