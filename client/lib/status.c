/* SPDX-License-Identifier: MIT */
/* libtkclient's statuses: the names of codes and causes, and the
 * statuses the client makes itself or copies from a reply.
 *
 * Owns: tk_status's making, copying and clearing; the code, cause and
 * outcome names; tk_version.
 * May call: libc and the generated tk.v1.Status only.
 * Must never: call tkd or touch a node; print or log. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tk/client.h>

#include "client_int.h"
#include "common/common.h"

#include "tk/v1/rpc.pb-c.h"

/* The library's, which a program compiled against another tk/version.h
 * may not know it runs with. */
const char *tk_version(void)
{
    return TK_VERSION;
}

/* The names are the proto's own: tk.v1.Status.Code, Cancellation.Cause. */
const char *tk_code_name(int code)
{
    static _Thread_local char other[24];
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
        &tk__v1__status__code__descriptor, code);
    if (v != NULL)
        return v->name;
    snprintf(other, sizeof other, "CODE_%d", code);
    return other;
}

int tk_code_from_name(const char *name)
{
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value_by_name(
        &tk__v1__status__code__descriptor, name);
    return v != NULL ? v->value : -1;
}

const char *tk_cause_name(int cause)
{
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
        &tk__v1__cancellation__cause__descriptor, cause);
    return v != NULL ? v->name : "UNKNOWN";
}

const char *tk_cancel_outcome_name(int outcome)
{
    static const char *const names[] = { "NOT_SENT", "CANCELLED", "NOT_FOUND",
                                         "ALREADY_DONE", "WRITE_CONTINUES" };
    if (outcome >= 0 && (size_t)outcome < sizeof names / sizeof names[0])
        return names[outcome];
    return "UNKNOWN";
}

void tk_status_clear(tk_status *status)
{
    if (status == NULL)
        return;
    free(status->message);
    free(status->reason);
    free(status->stderr_excerpt);
    free(status->tool);
    free(status->node);
    memset(status, 0, sizeof *status);
}

/* A status the client makes itself: no reply came, or none could be read. */
int tk__local_status(tk_status *st, int code, int cause, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    tk_status_clear(st);
    st->code = code;
    st->cause = cause;
    st->message = strdup(buf);
    st->reason = strdup("");
    st->tool = strdup("");
    st->node = strdup("");
    st->from_server = false;
    return code;
}

int tk__copy_status(tk_status *st, const Tk__V1__Status *in)
{
    tk_status_clear(st);
    st->from_server = true;
    if (in == NULL)
        return tk__local_status(st, TK_CODE_INTERNAL, TK_CAUSE_NONE,
                                "the reply carries no status");
    st->code = (int)in->code;
    st->message = strdup(in->message);
    st->reason = strdup(in->reason);
    st->tool = strdup(in->tool);
    st->node = strdup("");
    if (in->stderr_excerpt.len > 0) {
        st->stderr_excerpt = malloc(in->stderr_excerpt.len);
        if (st->stderr_excerpt != NULL) {
            memcpy(st->stderr_excerpt, in->stderr_excerpt.data,
                   in->stderr_excerpt.len);
            st->stderr_len = in->stderr_excerpt.len;
        }
    }
    st->partial = in->partial;
    st->retry_after_ms = in->retry_after_ms;
    st->elapsed_us = in->elapsed_us;
    if (in->cancellation != NULL) {
        st->cause = (int)in->cancellation->cause;
        st->process_killed = in->cancellation->process_killed;
        st->write_completed = in->cancellation->write_completed;
        st->cleanup_ms = in->cancellation->cleanup_ms;
    }
    if (st->message == NULL || st->reason == NULL || st->tool == NULL ||
        st->node == NULL)
        return tk__local_status(st, TK_CODE_INTERNAL, TK_CAUSE_NONE,
                                "out of memory");
    st->from_server = true;
    return st->code;
}
