/* SPDX-License-Identifier: MIT */
/*
 * tkcall — a grpcurl-style command line over libtkclient.
 *
 * Owns: the command line (flags, durations, the subcommands list and
 * describe), names as typed (names.c), the request's relative paths made
 * absolute (paths.c), reading the request JSON (-d JSON|@file|@-), printing
 * replies (JSON, or a method's text form: output.c, render.c), non-OK
 * statuses, -v and schemas (describe.c), the exit statuses below, and
 * Ctrl-C: SIGINT is blocked in every thread before any starts and taken by
 * one sigwait
 * thread; the first fires the call's tk_cancel, a second exits 130.
 * May call: libtkclient's public API only — tk/client.h, tk/json.h and the
 * generated gen/c/tk/v1/NAME.tk.h and NAME.pb-c.h — and libc.
 * Must never: use NNG, json-c or the envelope directly, resend a call, or
 * exit with a status outside the table below.
 */
#ifndef TK_TKCALL_H
#define TK_TKCALL_H

/* Exit statuses (also in tkcall --help). 1..16 are the gRPC code of a
 * non-OK status, whether tkd sent it or the client made it (14 UNAVAILABLE
 * when tkd is not running, 4 DEADLINE_EXCEEDED when no reply came); a code
 * beyond 16 exits 2 (UNKNOWN). */
enum {
    TKCALL_EXIT_OK = 0,
    TKCALL_EXIT_USAGE = 64,       /* bad flags or duration, unknown method,
                                     message or command, unreadable -d @file */
    TKCALL_EXIT_DATA = 65,        /* the request JSON does not parse or does
                                     not match the request message */
    TKCALL_EXIT_INTERRUPTED = 130 /* a second Ctrl-C, or one outside a call */
};

/* The deadline of a call without --timeout. */
#define TKCALL_DEFAULT_TIMEOUT_MS 30000u

#endif /* TK_TKCALL_H */
