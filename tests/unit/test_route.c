/* SPDX-License-Identifier: MIT */
/* The routing of a fleet's client (client/lib/route.c, through
 * tk__test_route): which node each call goes to, and what a call that can
 * go nowhere is told. DESIGN.md "Scaling out", the table of calls. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <tk/client.h>

#include "client/lib/test_seams.h"
#include "tk/v1/control.pb-c.h"
#include "tk/v1/git.pb-c.h"
#include "tk/v1/search.pb-c.h"

typedef struct packed {
    uint8_t buf[4096];
    size_t len;
} packed;

static packed pack(const ProtobufCMessage *m)
{
    packed p;
    p.len = protobuf_c_message_get_packed_size(m);
    assert_true(p.len <= sizeof p.buf);
    protobuf_c_message_pack(m, p.buf);
    return p;
}

static packed rev_parse(const char *repo)
{
    Tk__V1__GitRevParseRequest r = TK__V1__GIT_REV_PARSE_REQUEST__INIT;
    r.repo = (char *)repo;
    r.rev = "HEAD";
    return pack(&r.base);
}

/* Routes method with payload p over nodes; the chosen id, or the reason
 * (and *code) when none. */
static const char *route(const tk__test_node *nodes, size_t n,
                         const char *method, const packed *p, const char *named,
                         size_t *rr, int *code, char *msg, size_t msglen)
{
    static char out[64];
    tk_status st;
    int i = tk__test_route(nodes, n, method, p != NULL ? p->buf : NULL,
                           p != NULL ? p->len : 0, named, rr, &st);
    *code = st.code;
    if (msg != NULL)
        snprintf(msg, msglen, "%s", st.message);
    snprintf(out, sizeof out, "%s", i >= 0 ? nodes[i].id : st.reason);
    assert_non_null(st.node);
    tk_status_clear(&st);
    return out;
}

static const tk__test_node three[] = {
    { .id = "a", .roots = "/srv/a:/home/u" },
    { .id = "b", .roots = "/srv/b:/home/u/deep" },
    { .id = "c", .roots = "/" },
};

static void test_path_longest_prefix(void **state)
{
    (void)state;
    size_t rr = 0;
    int code;
    struct {
        const char *repo, *want;
    } cases[] = {
        { "/srv/a", "a" },           { "/srv/a/x/y", "a" },
        { "/srv/b/r", "b" },         { "/home/u/r", "a" },
        { "/home/u/deep/r", "b" },   /* the longer root wins */
        { "/home/u/deeper/r", "a" }, /* by whole components */
        { "/srv/ab", "c" },          /* not /srv/a: "/" holds it */
        { "/elsewhere", "c" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        packed p = rev_parse(cases[i].repo);
        assert_string_equal(route(three, 3, "tk.v1.Git/RevParse", &p, NULL, &rr,
                                  &code, NULL, 0),
                            cases[i].want);
        assert_int_equal(code, TK_OK);
    }
    assert_int_equal(rr, 0); /* path routing is no round robin */
}

static void test_path_no_node(void **state)
{
    (void)state;
    size_t rr = 0;
    int code;
    char msg[1024];
    packed p = rev_parse("/srv/ab/r");
    assert_string_equal(route(three, 2, "tk.v1.Git/RevParse", &p, NULL, &rr,
                              &code, msg, sizeof msg),
                        "NO_NODE_FOR_PATH");
    assert_int_equal(code, TK_CODE_NOT_FOUND);
    assert_non_null(strstr(msg, "/srv/ab/r"));         /* the path */
    assert_non_null(strstr(msg, "a: /srv/a /home/u")); /* the roots */
    assert_non_null(strstr(msg, "b: /srv/b"));
}

/* Search's path is `root`; WorktreeAdd's first is `repo` (its `path`
 * is another field marked PATH_IN_ROOTS, not the one routed by). */
static void test_path_fields(void **state)
{
    (void)state;
    size_t rr = 0;
    int code;
    Tk__V1__SearchRequest s = TK__V1__SEARCH_REQUEST__INIT;
    s.root = "/srv/b/x";
    packed p = pack(&s.base);
    assert_string_equal(
        route(three, 3, "tk.v1.Search/Search", &p, NULL, &rr, &code, NULL, 0),
        "b");
    Tk__V1__GitWorktreeAddRequest w = TK__V1__GIT_WORKTREE_ADD_REQUEST__INIT;
    w.repo = "/srv/a/r";
    w.path = "/srv/b/wt";
    p = pack(&w.base);
    assert_string_equal(
        route(three, 3, "tk.v1.Git/WorktreeAdd", &p, NULL, &rr, &code, NULL, 0),
        "a");
}

static void test_path_skips_down_and_draining(void **state)
{
    (void)state;
    static const tk__test_node twins[] = {
        { .id = "a", .roots = "/r", .down = true },
        { .id = "b", .roots = "/r", .draining = true },
        { .id = "c", .roots = "/r" },
        { .id = "d", .roots = "/" },
    };
    size_t rr = 0;
    int code;
    packed p = rev_parse("/r/x");
    assert_string_equal(
        route(twins, 4, "tk.v1.Git/Log", &p, NULL, &rr, &code, NULL, 0), "c");
    /* Every owner down or draining: not the node with "/" (it does not
     * own the longest root), but UNAVAILABLE. */
    assert_string_equal(
        route(twins, 2, "tk.v1.Git/Log", &p, NULL, &rr, &code, NULL, 0),
        "NO_LIVE_NODE");
    assert_int_equal(code, TK_CODE_UNAVAILABLE);
}

static void test_round_robin(void **state)
{
    (void)state;
    static const tk__test_node nodes[] = {
        { .id = "a" },
        { .id = "b", .draining = true },
        { .id = "c" },
        { .id = "d", .down = true },
    };
    size_t rr = 0;
    int code;
    Tk__V1__PingRequest ping = TK__V1__PING_REQUEST__INIT;
    packed p = pack(&ping.base);
    const char *want[] = { "a", "c", "a", "c" };
    for (size_t i = 0; i < 4; i++)
        assert_string_equal(route(nodes, 4, "tk.v1.Control/Ping", &p, NULL, &rr,
                                  &code, NULL, 0),
                            want[i]);
    assert_string_equal(route(nodes, 4, "tk.v1.Orders/GetOrder", NULL, NULL,
                              &rr, &code, NULL, 0),
                        "a");
    /* Git without a path goes anywhere, and tkd says what is missing. */
    packed none = rev_parse("");
    assert_string_equal(
        route(nodes, 4, "tk.v1.Git/RevParse", &none, NULL, &rr, &code, NULL, 0),
        "c");
    /* No live node: UNAVAILABLE. */
    assert_string_equal(route(nodes + 1, 1, "tk.v1.Control/Ping", &p, NULL, &rr,
                              &code, NULL, 0),
                        "NO_LIVE_NODE");
    assert_int_equal(code, TK_CODE_UNAVAILABLE);
}

static void test_services_and_named(void **state)
{
    (void)state;
    size_t rr = 0;
    int code;
    char msg[1024];
    assert_string_equal(route(three, 3, "tk.v1.Services/Status", NULL, NULL,
                              &rr, &code, msg, sizeof msg),
                        "NODE_REQUIRED");
    assert_int_equal(code, TK_CODE_INVALID_ARGUMENT);
    assert_non_null(strstr(msg, "a, b, c"));
    assert_string_equal(route(three, 1, "tk.v1.Services/Status", NULL, NULL,
                              &rr, &code, NULL, 0),
                        "a");
    assert_string_equal(route(three, 3, "tk.v1.Services/Status", NULL, "b", &rr,
                              &code, NULL, 0),
                        "b");
    /* A named node overrides the path. */
    packed p = rev_parse("/srv/a/r");
    assert_string_equal(
        route(three, 3, "tk.v1.Git/RevParse", &p, "c", &rr, &code, NULL, 0),
        "c");
    assert_string_equal(route(three, 3, "tk.v1.Control/Ping", NULL, "zz", &rr,
                              &code, msg, sizeof msg),
                        "UNKNOWN_NODE");
    assert_int_equal(code, TK_CODE_NOT_FOUND);
    assert_non_null(strstr(msg, "zz"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_path_longest_prefix),
        cmocka_unit_test(test_path_no_node),
        cmocka_unit_test(test_path_fields),
        cmocka_unit_test(test_path_skips_down_and_draining),
        cmocka_unit_test(test_round_robin),
        cmocka_unit_test(test_services_and_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
