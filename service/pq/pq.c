/* SPDX-License-Identifier: MIT */
/* libpq's functions that tkd calls, each a call through a pointer that
 * pq_load fills once with dlsym from libpq (TK_LIBPQ, the library meson
 * found). Each is defined with libpq-fe.h's prototype, so a pointer of the
 * wrong type does not compile. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "pq.h"

#ifndef TK_LIBPQ
#define TK_LIBPQ "libpq.so.5"
#endif

/* X(return type, name, parameters, arguments): those that return a value;
 * V(name, parameters, arguments): those that do not. */
#define PQ_FUNCTIONS(X, V)                                                     \
    V(PQclear, (PGresult * res), (res))                                        \
    X(char *, PQgetvalue, (const PGresult *res, int tup_num, int field_num),   \
      (res, tup_num, field_num))                                               \
    X(ConnStatusType, PQstatus, (const PGconn *conn), (conn))                  \
    X(int, PQcancel, (PGcancel * cancel, char *errbuf, int errbufsize),        \
      (cancel, errbuf, errbufsize))                                            \
    X(int, PQntuples, (const PGresult *res), (res))                            \
    X(ExecStatusType, PQresultStatus, (const PGresult *res), (res))            \
    X(int, PQsendQuery, (PGconn * conn, const char *query), (conn, query))     \
    V(PQfinish, (PGconn * conn), (conn))                                       \
    X(PGTransactionStatusType, PQtransactionStatus, (const PGconn *conn),      \
      (conn))                                                                  \
    X(int, PQsocket, (const PGconn *conn), (conn))                             \
    X(PGresult *, PQgetResult, (PGconn * conn), (conn))                        \
    X(PGconn *, PQconnectStartParams,                                          \
      (const char *const *keywords, const char *const *values,                 \
       int expand_dbname),                                                     \
      (keywords, values, expand_dbname))                                       \
    X(PostgresPollingStatusType, PQconnectPoll, (PGconn * conn), (conn))       \
    X(int, PQgetisnull, (const PGresult *res, int tup_num, int field_num),     \
      (res, tup_num, field_num))                                               \
    X(char *, PQerrorMessage, (const PGconn *conn), (conn))                    \
    X(int, PQsetnonblocking, (PGconn * conn, int arg), (conn, arg))            \
    X(PQnoticeReceiver, PQsetNoticeReceiver,                                   \
      (PGconn * conn, PQnoticeReceiver proc, void *arg), (conn, proc, arg))    \
    X(int, PQsendQueryParams,                                                  \
      (PGconn * conn, const char *command, int nParams, const Oid *paramTypes, \
       const char *const *paramValues, const int *paramLengths,                \
       const int *paramFormats, int resultFormat),                             \
      (conn, command, nParams, paramTypes, paramValues, paramLengths,          \
       paramFormats, resultFormat))                                            \
    X(char *, PQresultErrorMessage, (const PGresult *res), (res))              \
    X(char *, PQresultErrorField, (const PGresult *res, int fieldcode),        \
      (res, fieldcode))                                                        \
    X(int, PQisBusy, (PGconn * conn), (conn))                                  \
    V(PQfreeCancel, (PGcancel * cancel), (cancel))                             \
    X(int, PQflush, (PGconn * conn), (conn))                                   \
    X(int, PQconsumeInput, (PGconn * conn), (conn))                            \
    X(char *, PQhost, (const PGconn *conn), (conn))                            \
    X(PGcancel *, PQgetCancel, (PGconn * conn), (conn))                        \
    X(char *, PQdb, (const PGconn *conn), (conn))                              \
    X(char *, PQcmdStatus, (PGresult * res), (res))

/* A pointer of each function's own type, named as the function. */
// NOLINTNEXTLINE(bugprone-macro-parentheses): name is a declarator here
#define FIELD(ret, name, params, args) __typeof__(name) *name;
// NOLINTNEXTLINE(bugprone-macro-parentheses): name is a declarator here
#define VFIELD(name, params, args) __typeof__(name) *name;
static struct {
    PQ_FUNCTIONS(FIELD, VFIELD)
} fn;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int load_rv = -1;
static char load_err[512];

/* dlsym's void * as a function pointer: POSIX requires it to work. */
#define RESOLVE(name)                                                          \
    if (load_rv == 0) {                                                        \
        void *sym = dlsym(lib, #name);                                         \
        if (sym == NULL) {                                                     \
            snprintf(load_err, sizeof load_err, "%s has no %s", TK_LIBPQ,      \
                     #name);                                                   \
            load_rv = -1;                                                      \
        }                                                                      \
        memcpy(&fn.name, &sym, sizeof sym);                                    \
    }
#define RESOLVE_X(ret, name, params, args) RESOLVE(name)
#define RESOLVE_V(name, params, args) RESOLVE(name)

static void load(void)
{
    /* Never closed: libpq and what it loaded stay until tkd exits. */
    void *lib = dlopen(TK_LIBPQ, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        const char *why = dlerror();
        snprintf(load_err, sizeof load_err, "cannot load libpq: %s",
                 why != NULL ? why : TK_LIBPQ);
        return;
    }
    load_rv = 0;
    PQ_FUNCTIONS(RESOLVE_X, RESOLVE_V)
}

int pq_load(char *err, size_t errlen)
{
    pthread_once(&once, load);
    if (load_rv != 0 && err != NULL && errlen > 0)
        snprintf(err, errlen, "%s", load_err);
    return load_rv;
}

/* What a call that got here before a successful pq_load does: a bug of
 * tkd's, and no way to go on. */
static void unloaded(const char *name)
{
    fprintf(stderr, "tkd: %s called before libpq was loaded\n", name);
    abort();
}

#define CALL_X(ret, name, params, args)                                        \
    ret name params                                                            \
    {                                                                          \
        if (pq_load(NULL, 0) != 0)                                             \
            unloaded(#name);                                                   \
        return fn.name args;                                                   \
    }
/* Those that take NULL (a result or connection never made) do nothing on
 * it, loaded or not, as libpq's do. */
#define CALL_V(name, params, args)                                             \
    void name params                                                           \
    {                                                                          \
        if (pq_load(NULL, 0) != 0) {                                           \
            if (NULL == (void *)(args))                                        \
                return;                                                        \
            unloaded(#name);                                                   \
        }                                                                      \
        fn.name args;                                                          \
    }
PQ_FUNCTIONS(CALL_X, CALL_V)
