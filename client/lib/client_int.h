/* What the files of libtkclient share and do not export. */
#ifndef TK_CLIENT_LIB_INT_H
#define TK_CLIENT_LIB_INT_H

#include <stddef.h>

/* The C library's text for errno value e, in buf; thread-safe, never
 * NULL (errtext.c: the POSIX strerror_r, which glibc and macOS share). */
const char *tk__errtext(int e, char *buf, size_t len);

#endif
