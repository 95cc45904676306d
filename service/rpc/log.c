/* The process-wide log: one line per event on stderr. The level is published
 * atomically, so tests that start several servers never race on it. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "rpc_int.h"

static _Atomic int log_level = RPC_LOG_INFO;

static const char *const level_names[] = { "error", "warn", "info", "debug" };

void rpc_log_set_level(rpc_log_level level)
{
    atomic_store(&log_level, (int)level);
}

int rpc_log_level_from_name(const char *name)
{
    for (size_t i = 0; i < sizeof level_names / sizeof level_names[0]; i++)
        if (strcmp(name, level_names[i]) == 0)
            return (int)i;
    return -1;
}

bool rpc_log_enabled(rpc_log_level level)
{
    return (int)level <= atomic_load(&log_level);
}

/* One write(2) per line (stdio locks the stream), so lines of concurrent
 * calls never interleave. */
__attribute__((format(printf, 2, 0))) static void
emit(rpc_log_level level, const char *fmt, va_list ap)
{
    char line[1024];
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    int n = snprintf(
        line, sizeof line,
        "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ tkd %s: ", tm.tm_year + 1900,
        tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
        ts.tv_nsec / 1000000, level_names[level]);
    if (n < 0)
        return;
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    fprintf(stderr, "%s\n", line);
}

void rpc_log(rpc_log_level level, const char *fmt, ...)
{
    if (!rpc_log_enabled(level))
        return;
    va_list ap;
    va_start(ap, fmt);
    emit(level, fmt, ap);
    va_end(ap);
}

void rpc_log__call(const rpc_call *call, int64_t elapsed_us)
{
    if (!rpc_log_enabled(RPC_LOG_INFO))
        return;
    rpc_log(RPC_LOG_INFO,
            "call method=%s code=%s reason=%s elapsed_us=%lld cause=%s "
            "conn=%u id=%llu",
            /* never the requested name: it is the peer's bytes */
            call->reg != NULL ? call->reg->method->name : "-",
            rpc_code_name(call->code),
            call->reason != NULL && call->reason[0] ? call->reason : "-",
            (long long)elapsed_us, rpc_cause_name(call->end_cause),
            (unsigned)call->peer.conn, (unsigned long long)call->id);
}

/* The names are the proto's own: tk.v1.Status.Code, Cancellation.Cause. */
const char *rpc_code_name(rpc_code code)
{
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
        &tk__v1__status__code__descriptor, (int)code);
    return v != NULL ? v->name : "UNKNOWN";
}

const char *rpc_cause_name(rpc_cause cause)
{
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
        &tk__v1__cancellation__cause__descriptor, (int)cause);
    return v != NULL ? v->name : "NONE";
}
