/* SPDX-License-Identifier: MIT */
/* macOS's <crt_externs.h>, the part tk may use: a shared library (as
 * libtkclient is) cannot name `environ` directly on macOS and asks
 * _NSGetEnviron() (environ(7): "Shared libraries and bundles don't have
 * direct access to environ, which is only available to the loader ld(1)
 * when a complete program is being linked ... use _NSGetEnviron()").
 * Declared as in Apple's header. For tools/apple/check only. */
#ifndef TK_APPLE_CRT_EXTERNS_H
#define TK_APPLE_CRT_EXTERNS_H

extern char ***_NSGetEnviron(void);

#endif
