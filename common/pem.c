/* SPDX-License-Identifier: MIT */
/* Reading a PEM file (a certificate, its key, a CA): tkd's listeners and
 * the clients' mutual TLS. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "common.h"

char *tkc_read_pem(const char *what, const char *path, char *err, size_t errlen)
{
    enum { PEM_MAX = 64 * 1024 };
    char ebuf[128];
    FILE *f = fopen(path, "re");
    if (f == NULL) {
        tkc_set_err(err, errlen, "%s %s: %s", what, path,
                    tkc_strerror(errno, ebuf, sizeof ebuf));
        return NULL;
    }
    char *buf = malloc(PEM_MAX + 1);
    size_t len = buf != NULL ? fread(buf, 1, PEM_MAX + 1, f) : 0;
    bool bad = buf == NULL || ferror(f) || len > PEM_MAX;
    (void)fclose(f); /* read only: nothing is lost if it fails */
    if (bad) {
        tkc_set_err(err, errlen, "%s %s: unreadable, or over 64 KiB", what,
                    path);
        free(buf);
        return NULL;
    }
    buf[len] = '\0';
    return buf;
}
