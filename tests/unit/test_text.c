/* SPDX-License-Identifier: MIT */
/* rpc_utf8_valid and rpc_utf8_prefix (service/rpc/text.c): what proto3
 * calls UTF-8, as strict decoders check it, and prefixes that never end
 * inside a character. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "rpc/rpc.h"

static bool valid(const char *s)
{
    return rpc_utf8_valid(s, strlen(s));
}

static void test_valid(void **state)
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
    assert_true(rpc_utf8_valid("a\0b", 3));
}

static void test_prefix(void **state)
{
    (void)state;
    assert_int_equal(rpc_utf8_prefix("abc", 2), 2);
    assert_int_equal(rpc_utf8_prefix("abc", 10), 3);
    /* "é" is two bytes: a prefix of 3 bytes of "aéé" is "aé". */
    assert_int_equal(rpc_utf8_prefix("a\xc3\xa9\xc3\xa9", 4), 3);
    assert_int_equal(rpc_utf8_prefix("a\xc3\xa9\xc3\xa9", 5), 5);
    assert_int_equal(rpc_utf8_prefix("\xf0\x9f\x98\x80", 3), 0);
    /* A stray byte counts as one: the text is cut, not refused. */
    assert_int_equal(rpc_utf8_prefix("a\xffz", 2), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid),
        cmocka_unit_test(test_prefix),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
