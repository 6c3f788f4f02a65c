// libpq's functions that feedingest calls, each a stub that loads libpq on first use (see include/CLibraryLoader.h).
// Each definition repeats the prototype of <libpq-fe.h>: the compiler refuses one that differs.
#include <postgresql/libpq-fe.h>
#include "loader.h"

#define PQ_REAL(name) FEEDINGEST_LAZY(feedingest_libpq, name)
#define STUB(type, name, parameters, arguments) FEEDINGEST_STUB type name parameters { return PQ_REAL(name) arguments; }
#define VOID_STUB(name, parameters, arguments) FEEDINGEST_STUB void name parameters { PQ_REAL(name) arguments; }

STUB(int, PQlibVersion, (void), ())
STUB(PQconninfoOption *, PQconninfoParse, (const char *conninfo, char **errmsg), (conninfo, errmsg))
VOID_STUB(PQconninfoFree, (PQconninfoOption *connOptions), (connOptions))
VOID_STUB(PQfreemem, (void *ptr), (ptr))

STUB(PGconn *, PQconnectdbParams, (const char *const *keywords, const char *const *values, int expand_dbname),
     (keywords, values, expand_dbname))
VOID_STUB(PQfinish, (PGconn *conn), (conn))
VOID_STUB(PQreset, (PGconn *conn), (conn))
STUB(ConnStatusType, PQstatus, (const PGconn *conn), (conn))
STUB(PGTransactionStatusType, PQtransactionStatus, (const PGconn *conn), (conn))
STUB(int, PQconnectionNeedsPassword, (const PGconn *conn), (conn))
STUB(int, PQserverVersion, (const PGconn *conn), (conn))
STUB(char *, PQerrorMessage, (const PGconn *conn), (conn))
STUB(PQnoticeProcessor, PQsetNoticeProcessor, (PGconn *conn, PQnoticeProcessor proc, void *arg), (conn, proc, arg))

STUB(PGresult *, PQexec, (PGconn *conn, const char *query), (conn, query))
STUB(PGresult *, PQprepare, (PGconn *conn, const char *stmtName, const char *query, int nParams, const Oid *paramTypes),
     (conn, stmtName, query, nParams, paramTypes))
STUB(PGresult *, PQexecPrepared, (PGconn *conn, const char *stmtName, int nParams, const char *const *paramValues,
                                  const int *paramLengths, const int *paramFormats, int resultFormat),
     (conn, stmtName, nParams, paramValues, paramLengths, paramFormats, resultFormat))
VOID_STUB(PQclear, (PGresult *res), (res))
STUB(ExecStatusType, PQresultStatus, (const PGresult *res), (res))
STUB(char *, PQresultErrorMessage, (const PGresult *res), (res))
STUB(char *, PQresultErrorField, (const PGresult *res, int fieldcode), (res, fieldcode))
STUB(char *, PQcmdTuples, (PGresult *res), (res))
STUB(int, PQntuples, (const PGresult *res), (res))
STUB(Oid, PQftype, (const PGresult *res, int field_num), (res, field_num))
STUB(int, PQfformat, (const PGresult *res, int field_num), (res, field_num))
STUB(int, PQgetisnull, (const PGresult *res, int tup_num, int field_num), (res, tup_num, field_num))
STUB(int, PQgetlength, (const PGresult *res, int tup_num, int field_num), (res, tup_num, field_num))
STUB(char *, PQgetvalue, (const PGresult *res, int tup_num, int field_num), (res, tup_num, field_num))
