/* SPDX-License-Identifier: MIT */
/*
 * What every harness of tests/fuzz shares. A harness defines
 * LLVMFuzzerTestOneInput (and sets itself up at its first input); it is
 * linked with libFuzzer in the fuzz build (meson -Dfuzz=true, clang), and
 * with replay.c everywhere else, which runs it once on every file of its
 * checked-in corpus (the meson suite 'fuzz'). A harness reports a broken
 * property with FUZZ_CHECK, which aborts: libFuzzer saves the input.
 */
#ifndef TK_TESTS_FUZZ_H
#define TK_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                                  \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__,   \
                    #cond);                                                    \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            abort();                                                           \
        }                                                                      \
    } while (0)

#endif
