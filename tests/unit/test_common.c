/* SPDX-License-Identifier: MIT */
/* common/: what tkd and the clients share, each promise of common.h
 * checked directly, in the build's own choice where one differs between
 * systems (with -Dportable, every fallback). */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/common.h"

static void test_strerror(void **state)
{
    (void)state;
    char buf[128];
    /* The C library's own words, as git and libpq print them. */
    assert_string_equal(tkc_strerror(EMFILE, buf, sizeof buf),
                        "Too many open files");
    assert_string_equal(tkc_strerror(ENOENT, buf, sizeof buf),
                        "No such file or directory");
    char tiny[4];
    const char *t = tkc_strerror(EMFILE, tiny, sizeof tiny);
    assert_true(strlen(t) < sizeof tiny);
    assert_string_equal(tkc_strerror(EMFILE, tiny, 0), "");
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

/* A timed wait never ends ETIMEDOUT before the monotonic time it was
 * given, and does end (the test would hang, and the watchdog report it). */
static void test_cond_timeout(void **state)
{
    (void)state;
    pthread_cond_t cv;
    assert_int_equal(tkc_cond_init(&cv), 0);
    int64_t until = tkc_mono_ns() + 20LL * 1000000;
    pthread_mutex_lock(&mu);
    int rv;
    while ((rv = tkc_cond_wait_until(&cv, &mu, until)) == 0)
        ;
    pthread_mutex_unlock(&mu);
    assert_int_equal(rv, ETIMEDOUT);
    assert_true(tkc_mono_ns() >= until);
    /* A time already past: at once. */
    pthread_mutex_lock(&mu);
    assert_int_equal(tkc_cond_wait_until(&cv, &mu, tkc_mono_ns() - 1),
                     ETIMEDOUT);
    pthread_mutex_unlock(&mu);
    pthread_cond_destroy(&cv);
}

static struct {
    pthread_cond_t cv;
    bool go;
} wake;

static void *waker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&mu);
    wake.go = true;
    pthread_cond_signal(&wake.cv);
    pthread_mutex_unlock(&mu);
    return NULL;
}

/* A signal ends the wait before its time (an hour away). */
static void test_cond_signal(void **state)
{
    (void)state;
    assert_int_equal(tkc_cond_init(&wake.cv), 0);
    int64_t until = tkc_mono_ns() + (int64_t)3600 * 1000000000;
    pthread_mutex_lock(&mu);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, waker, NULL), 0);
    while (!wake.go)
        assert_int_equal(tkc_cond_wait_until(&wake.cv, &mu, until), 0);
    pthread_mutex_unlock(&mu);
    pthread_join(t, NULL);
    pthread_cond_destroy(&wake.cv);
}

static void test_wipe(void **state)
{
    (void)state;
    char secret[32];
    memset(secret, 'k', sizeof secret);
    tkc_wipe(secret, sizeof secret);
    for (size_t i = 0; i < sizeof secret; i++)
        assert_int_equal(secret[i], 0);
}

/* The message cut to the buffer, with its NUL; no buffer, no harm. */
static void test_set_err(void **state)
{
    (void)state;
    char err[8];
    tkc_set_err(err, sizeof err, "%s %d", "too long", 42);
    assert_string_equal(err, "too lon");
    tkc_set_err(NULL, 64, "nowhere %d", 1);
    err[0] = 'x';
    tkc_set_err(err, 0, "nothing");
    assert_int_equal(err[0], 'x');
}

/* A file whole; a missing one, and one over 64 KiB, refused with why. */
static void test_read_pem(void **state)
{
    (void)state;
    char path[] = "/tmp/tk-test-pem-XXXXXX", err[256];
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fputs("-----BEGIN X-----\n", f);
    assert_int_equal(fflush(f), 0);
    char *pem = tkc_read_pem("the key", path, err, sizeof err);
    assert_non_null(pem);
    assert_string_equal(pem, "-----BEGIN X-----\n");
    tkc_wipe(pem, strlen(pem));
    free(pem);
    for (int i = 0; i < 64 * 1024; i++)
        fputc('x', f);
    assert_int_equal(fclose(f), 0);
    assert_null(tkc_read_pem("the key", path, err, sizeof err));
    assert_non_null(strstr(err, "the key /tmp/tk-test-pem-"));
    assert_non_null(strstr(err, ": unreadable, or over 64 KiB"));
    assert_int_equal(unlink(path), 0);
    assert_null(tkc_read_pem("the CA", path, err, sizeof err));
    char want[300];
    snprintf(want, sizeof want, "the CA %s: No such file or directory", path);
    assert_string_equal(err, want);
}

/* Protobuf's varints: the edges of each length, and a read that the
 * bytes end in, or that runs past 64 bits, fails leaving *p where it was. */
static void test_varint(void **state)
{
    (void)state;
    static const uint64_t values[] = { 0,     1,     127,        128,
                                       16383, 16384, UINT32_MAX, UINT64_MAX };
    static const size_t lens[] = { 1, 1, 1, 2, 2, 3, 5, 10 };
    for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
        uint8_t buf[10];
        assert_int_equal(tkc_varint_len(values[i]), lens[i]);
        uint8_t *end = tkc_put_varint(buf, values[i]);
        assert_int_equal(end - buf, lens[i]);
        const uint8_t *p = buf;
        uint64_t v = 0;
        assert_true(tkc_get_varint(&p, end, &v));
        assert_true(p == end);
        assert_true(v == values[i]);
        p = buf;
        assert_false(tkc_get_varint(&p, end - 1, &v));
        assert_true(p == buf);
    }
    uint8_t eleven[11];
    memset(eleven, 0x80, sizeof eleven);
    eleven[10] = 0x01;
    const uint8_t *p = eleven;
    uint64_t v;
    assert_false(tkc_get_varint(&p, eleven + sizeof eleven, &v));
    assert_true(p == eleven);
}

/* Sets an environment variable (value), or unsets it (NULL). */
static void put_env(const char *name, const char *value)
{
    if (value != NULL) {
        // NOLINTNEXTLINE(concurrency-mt-unsafe): one thread (the timed-wait tests join theirs)
        assert_int_equal(setenv(name, value, 1), 0);
    } else {
        // NOLINTNEXTLINE(concurrency-mt-unsafe): one thread (the timed-wait tests join theirs)
        assert_int_equal(unsetenv(name), 0);
    }
}

/* The default address: TK_ADDR, else under $XDG_RUNTIME_DIR (when it is
 * absolute), else under /tmp by uid; one that does not fit is refused. */
static void test_default_address(void **state)
{
    (void)state;
    char buf[256], want[64];
    put_env("TK_ADDR", "tcp://127.0.0.1:7000");
    assert_int_equal(tkc_default_address(buf, sizeof buf), 0);
    assert_string_equal(buf, "tcp://127.0.0.1:7000");
    assert_int_equal(tkc_default_address(buf, 5), -ENAMETOOLONG);
    put_env("TK_ADDR", "");
    put_env("XDG_RUNTIME_DIR", "/run/user/1000");
    assert_int_equal(tkc_default_address(buf, sizeof buf), 0);
    assert_string_equal(buf, "ipc:///run/user/1000/tk/tkd.sock");
    put_env("XDG_RUNTIME_DIR", "relative");
    assert_int_equal(tkc_default_address(buf, sizeof buf), 0);
    snprintf(want, sizeof want, "ipc:///tmp/tk-%u/tkd.sock",
             (unsigned)geteuid());
    assert_string_equal(buf, want);
    put_env("TK_ADDR", NULL);
    put_env("XDG_RUNTIME_DIR", NULL);
    assert_int_equal(tkc_default_address(buf, sizeof buf), 0);
    assert_string_equal(buf, want);
    assert_int_equal(tkc_default_address(buf, strlen(want)), -ENAMETOOLONG);
}

/* Growth: first, then doubling; a size past SIZE_MAX refused before
 * realloc, leaving the array and *cap as they were; and elem 0 (a caller
 * that grows nothing) is no division by zero. */
static void test_grow(void **state)
{
    (void)state;
    size_t cap = 0;
    int *a = tkc_grow(NULL, &cap, 1, sizeof *a, 4);
    assert_non_null(a);
    assert_int_equal(cap, 4);
    assert_ptr_equal(tkc_grow(a, &cap, 4, sizeof *a, 4), a);
    a = tkc_grow(a, &cap, 5, sizeof *a, 4);
    assert_non_null(a);
    assert_int_equal(cap, 8);
    a = tkc_grow(a, &cap, 17, sizeof *a, 4);
    assert_non_null(a);
    assert_int_equal(cap, 32);
    assert_null(tkc_grow(a, &cap, SIZE_MAX / 2 + 2, 1, 4));
    assert_null(tkc_grow(a, &cap, SIZE_MAX / sizeof *a + 1, sizeof *a, 4));
    assert_int_equal(cap, 32);
    free(a);

    size_t none = 0;
    void *z = tkc_grow(NULL, &none, 5, 0, 4);
    assert_int_equal(none, z != NULL ? 8 : 0);
    free(z);
}

/* A byte buffer: all zero is empty, appends keep a NUL after len, and an
 * append that cannot fit leaves the buffer as it was. */
static void test_buf(void **state)
{
    (void)state;
    tkc_buf b = { 0 };
    assert_int_equal(tkc_buf_append(&b, "ab", 2), 0);
    assert_int_equal(b.len, 2);
    assert_int_equal(b.cap, TKC_BUF_FIRST);
    assert_string_equal(b.data, "ab");
    assert_int_equal(tkc_buf_append(&b, NULL, 0), 0);
    assert_string_equal(b.data, "ab");
    char big[TKC_BUF_FIRST];
    memset(big, 'x', sizeof big);
    assert_int_equal(tkc_buf_append(&b, big, sizeof big), 0);
    assert_int_equal(b.len, 2 + sizeof big);
    assert_int_equal(b.cap, 2 * TKC_BUF_FIRST);
    assert_int_equal(b.data[b.len], '\0');
    char *before = b.data;
    assert_int_equal(tkc_buf_append(&b, big, SIZE_MAX - 2), -ENOMEM);
    assert_ptr_equal(b.data, before);
    assert_int_equal(b.len, 2 + sizeof big);
    assert_int_equal(tkc_buf_reserve(&b, SIZE_MAX), -ENOMEM);
    tkc_buf_fini(&b);
    assert_null(b.data);
    assert_int_equal(b.len + b.cap, 0);
}

static bool valid(const char *s)
{
    return tkc_utf8_valid(s, strlen(s));
}

/* What proto3 calls UTF-8, as strict decoders check it. */
static void test_utf8_valid(void **state)
{
    (void)state;
    static const char *const good[] = {
        "",
        "ascii",
        "caf\xc3\xa9",      /* U+00E9 */
        "\xe6\x97\xa5",     /* U+65E5 */
        "\xf0\x9f\x98\x80", /* U+1F600 */
        "\xef\xbf\xbf",     /* U+FFFF */
        "\xf4\x8f\xbf\xbf", /* U+10FFFF, the last */
        "\xed\x9f\xbf",     /* U+D7FF, below the surrogates */
    };
    static const char *const bad[] = {
        "caf\xe9",          /* Latin-1 */
        "\xc3",             /* cut short */
        "\xe6\x97",         /* cut short */
        "\xc0\xaf",         /* overlong '/' */
        "\xe0\x80\xaf",     /* overlong '/' */
        "\xf0\x80\x80\xaf", /* overlong '/' */
        "\xed\xa0\x80",     /* U+D800, a surrogate */
        "\xf4\x90\x80\x80", /* past U+10FFFF */
        "\xf5\x80\x80\x80", /* no such lead byte */
        "\x80",             /* a continuation alone */
        "a\xc3(",           /* a lead byte before ASCII */
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        if (!valid(good[i]))
            fail_msg("good[%zu] refused", i);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (valid(bad[i]))
            fail_msg("bad[%zu] accepted", i);
    /* A NUL is a character (a string field may not hold one for another
     * reason: service/rpc/payload.c). */
    assert_true(tkc_utf8_valid("a\0b", 3));
}

/* Prefixes that never end inside a character. */
static void test_utf8_prefix(void **state)
{
    (void)state;
    assert_int_equal(tkc_utf8_prefix("abc", 2), 2);
    assert_int_equal(tkc_utf8_prefix("abc", 10), 3);
    /* "é" is two bytes: a prefix of 3 bytes of "aéé" is "aé". */
    assert_int_equal(tkc_utf8_prefix("a\xc3\xa9\xc3\xa9", 4), 3);
    assert_int_equal(tkc_utf8_prefix("a\xc3\xa9\xc3\xa9", 5), 5);
    assert_int_equal(tkc_utf8_prefix("\xf0\x9f\x98\x80", 3), 0);
    /* A stray byte counts as one: the text is cut, not refused. */
    assert_int_equal(tkc_utf8_prefix("a\xffz", 2), 2);
}

/* Each sequence's code point, and back: the edges of each length. */
static void test_utf8_code_points(void **state)
{
    (void)state;
    static const uint32_t cps[] = { 0,      0x7F,   0x80,   0x7FF,   0x800,
                                    0xD7FF, 0xE000, 0xFFFF, 0x10000, 0x10FFFF };
    for (size_t i = 0; i < sizeof cps / sizeof *cps; i++) {
        char u[4];
        size_t n = tkc_utf8_put(u, cps[i]);
        uint32_t back = UINT32_MAX;
        assert_int_equal(tkc_utf8_seq(u, n, &back), n);
        assert_true(back == cps[i]);
        assert_true(tkc_utf8_valid(u, n));
        if (n > 1) /* cut short */
            assert_int_equal(tkc_utf8_seq(u, n - 1, NULL), 0);
    }
    uint32_t cp = 7;
    assert_int_equal(tkc_utf8_seq("\xed\xa0\x80", 3, &cp), 0); /* U+D800 */
    assert_true(cp == 7);
}

static void test_hex4(void **state)
{
    (void)state;
    uint32_t v = 0;
    assert_true(tkc_hex4("00e9", 4, &v));
    assert_true(v == 0xe9);
    assert_true(tkc_hex4("D83Dxyz", 7, &v));
    assert_true(v == 0xd83d);
    assert_true(tkc_hex4("fFfF", 4, &v));
    assert_true(v == 0xffff);
    v = 1;
    assert_false(tkc_hex4("00e", 3, &v));
    assert_false(tkc_hex4("00eg", 4, &v));
    assert_false(tkc_hex4("+0e9", 4, &v));
    assert_true(v == 1);
}

/* RFC 4648's vectors both ways. */
static void test_base64_vectors(void **state)
{
    (void)state;
    static const char *const plain[] = { "",     "f",     "fo",    "foo",
                                         "foob", "fooba", "foobar" };
    static const char *const coded[] = {
        "", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"
    };
    for (size_t i = 0; i < sizeof plain / sizeof *plain; i++) {
        size_t n = strlen(plain[i]);
        char out[16];
        size_t k = tkc_base64_encode(out, (const uint8_t *)plain[i], n);
        assert_int_equal(k, strlen(coded[i]));
        assert_memory_equal(out, coded[i], k);
        uint8_t back[16];
        assert_int_equal(tkc_base64_len(coded[i], k, 0), n);
        assert_int_equal(tkc_base64_decode(back, coded[i], k, 0), n);
        assert_memory_equal(back, plain[i], n);
    }
}

/* What each caller's flags take: search (none) reads rg's padded standard
 * base64 only; the JSON codec (both) also the URL-safe alphabet and no
 * padding. Neither takes a lone sixth of a byte, padding out of place, or
 * a third '='. */
static void test_base64_flags(void **state)
{
    (void)state;
    const unsigned json = TKC_B64_URL | TKC_B64_NOPAD;
    static const struct {
        const char *in;
        size_t strict, json; /* bytes, or SIZE_MAX: refused */
    } cases[] = {
        { "Zm8=", 2, 2 },
        { "Zm8", SIZE_MAX, 2 },
        { "Zg", SIZE_MAX, 1 },
        { "Z", SIZE_MAX, SIZE_MAX },
        { "Zg=", SIZE_MAX, SIZE_MAX },
        { "-_8=", SIZE_MAX, 2 },
        { "+/8=", 2, 2 },
        { "Z===", SIZE_MAX, SIZE_MAX },
        { "====", SIZE_MAX, SIZE_MAX },
        { "Zg==Zg==", SIZE_MAX, SIZE_MAX },
        { "Zm 8", SIZE_MAX, SIZE_MAX },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *in = cases[i].in;
        uint8_t out[8];
        if (tkc_base64_decode(out, in, strlen(in), 0) != cases[i].strict)
            fail_msg("%s: not %zu bytes strictly", in, cases[i].strict);
        if (tkc_base64_decode(out, in, strlen(in), json) != cases[i].json)
            fail_msg("%s: not %zu bytes as JSON has it", in, cases[i].json);
    }
    uint8_t out[2];
    assert_int_equal(tkc_base64_decode(out, "-_8", 3, json), 2);
    assert_int_equal(out[0], 0xfb);
    assert_int_equal(out[1], 0xff);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strerror),
        cmocka_unit_test(test_cond_timeout),
        cmocka_unit_test(test_cond_signal),
        cmocka_unit_test(test_wipe),
        cmocka_unit_test(test_set_err),
        cmocka_unit_test(test_read_pem),
        cmocka_unit_test(test_varint),
        cmocka_unit_test(test_default_address),
        cmocka_unit_test(test_grow),
        cmocka_unit_test(test_buf),
        cmocka_unit_test(test_utf8_valid),
        cmocka_unit_test(test_utf8_prefix),
        cmocka_unit_test(test_utf8_code_points),
        cmocka_unit_test(test_hex4),
        cmocka_unit_test(test_base64_vectors),
        cmocka_unit_test(test_base64_flags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
