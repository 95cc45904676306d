/* tkcall's files among themselves: tkcall.c (the command line, calls,
 * list, describe) over output.c (what a call prints). */
#ifndef TK_TKCALL_INT_H
#define TK_TKCALL_INT_H

#include <protobuf-c/protobuf-c.h>

#include <tk/client.h>

/* A status tkcall makes itself, like those libtkclient makes: from_server
 * false, reason "". Returns code. */
int tkcall_make_status(tk_status *st, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The exit status of a non-OK code: the code itself, 2 (UNKNOWN) beyond
 * 16. */
int tkcall_exit_status_of(int code);

/* Prints a non-OK status on stderr as one line of JSON and frees it;
 * returns the exit status. */
int tkcall_report(tk_status *st);

/* Prints an OK reply on stdout as JSON with tk_json_encode's flags;
 * returns the exit status. */
int tkcall_print_reply(const ProtobufCMessage *reply, int flags);

#endif /* TK_TKCALL_INT_H */
