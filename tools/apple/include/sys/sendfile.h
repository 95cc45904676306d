/* SPDX-License-Identifier: MIT */
/* Linux only: Linux's sendfile(2); macOS's sendfile(2) is in <sys/socket.h>
 * with another signature. For tools/apple/check only. */
#error                                                                         \
    "Linux only: <sys/sendfile.h> is not on macOS: Linux's sendfile(2); macOS's sendfile(2) is in <sys/socket.h> with another signature"
