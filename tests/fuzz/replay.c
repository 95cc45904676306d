/* SPDX-License-Identifier: MIT */
/* The main of a harness outside the fuzz build: runs LLVMFuzzerTestOneInput
 * once on every file named, or on every file of each directory named (not
 * recursively, in name order), as libFuzzer does with -runs=0. What the
 * meson suite 'fuzz' runs on the checked-in corpora with every compiler
 * and sanitizer, so that an input that once broke a property keeps being
 * tried. Exit 0 when every input passed (a failed check aborts), 2 when a
 * file cannot be read. */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "replay: %s: %m\n", path);
        return 2;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    size_t n;
    while (buf != NULL && (n = fread(buf + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            uint8_t *nb = realloc(buf, cap * 2);
            if (nb == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    bool failed = ferror(f) != 0 || buf == NULL;
    if (fclose(f) != 0)
        failed = true;
    if (failed) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        free(buf);
        return 2;
    }
    /* An exact-size copy, so that ASan sees a read past the input. */
    uint8_t *exact = malloc(len > 0 ? len : 1);
    if (exact == NULL) {
        free(buf);
        return 2;
    }
    memcpy(exact, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int run_dir(const char *dir, size_t *count)
{
    struct dirent **names;
    int n = scandir(dir, &names, NULL, by_name);
    if (n < 0) {
        fprintf(stderr, "replay: %s: %m\n", dir);
        return 2;
    }
    int rv = 0;
    for (int i = 0; i < n; i++) {
        char path[4096];
        int k = snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
        struct stat st;
        if (rv == 0 && k > 0 && (size_t)k < sizeof path &&
            stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            rv = run_file(path);
            (*count)++;
        }
        free(names[i]);
    }
    free(names);
    return rv;
}

int main(int argc, char **argv)
{
    size_t count = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: %s: %m\n", argv[i]);
            return 2;
        }
        int rv = S_ISDIR(st.st_mode) ? run_dir(argv[i], &count)
                                     : (count++, run_file(argv[i]));
        if (rv != 0)
            return rv;
    }
    fprintf(stderr, "replay: %zu input(s) passed\n", count);
    return 0;
}
