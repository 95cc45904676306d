/* SPDX-License-Identifier: MIT */
/* tk/version.h and tk_version(): the library says the version its header
 * says, and both are meson's project version (argv[1], which meson passes:
 * the one place the version is written). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <tk/client.h>
#include <tk/version.h>

static const char *project_version;

static void test_library_is_header(void **state)
{
    (void)state;
    assert_string_equal(tk_version(), TK_VERSION);
}

static void test_header_is_meson_project_version(void **state)
{
    (void)state;
    assert_string_equal(TK_VERSION, project_version);
}

static void test_parts_and_number(void **state)
{
    (void)state;
    char made[64];
    snprintf(made, sizeof made, "%d.%d.%d", TK_VERSION_MAJOR, TK_VERSION_MINOR,
             TK_VERSION_PATCH);
    assert_string_equal(made, TK_VERSION);
    assert_int_equal(TK_VERSION_NUMBER, TK_VERSION_MAJOR * 1000000 +
                                            TK_VERSION_MINOR * 1000 +
                                            TK_VERSION_PATCH);
#if TK_VERSION_NUMBER < 0 /* what #if needs: a number */
#error TK_VERSION_NUMBER is no number the preprocessor can compare
#endif
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_version PROJECT_VERSION\n");
        return 2;
    }
    project_version = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_library_is_header),
        cmocka_unit_test(test_header_is_meson_project_version),
        cmocka_unit_test(test_parts_and_number),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
