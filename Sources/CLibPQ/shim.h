#ifndef FEEDINGEST_CLIBPQ_SHIM_H
#define FEEDINGEST_CLIBPQ_SHIM_H
// libpq, PostgreSQL's C client library (https://www.postgresql.org/docs/current/libpq.html), from libpq-dev.
#include <postgresql/libpq-fe.h>  // not linked: see CLibraryLoader

// The PG_DIAG_* field codes of PQresultErrorField are character-literal macros, which Swift does not import.
static inline int CLibPQ_diagSQLState(void) { return PG_DIAG_SQLSTATE; }
static inline int CLibPQ_diagSeverity(void) { return PG_DIAG_SEVERITY_NONLOCALIZED; }
static inline int CLibPQ_diagMessagePrimary(void) { return PG_DIAG_MESSAGE_PRIMARY; }
static inline int CLibPQ_diagMessageDetail(void) { return PG_DIAG_MESSAGE_DETAIL; }
static inline int CLibPQ_diagMessageHint(void) { return PG_DIAG_MESSAGE_HINT; }

// A notice processor that drops notices: libpq's default prints them on stderr, which belongs to the command.
static inline void CLibPQ_ignoreNotice(void *arg, const char *message) { (void)arg; (void)message; }
static inline void CLibPQ_silenceNotices(PGconn *conn) { PQsetNoticeProcessor(conn, CLibPQ_ignoreNotice, NULL); }
#endif
