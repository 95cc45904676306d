/* SPDX-License-Identifier: MIT */
/* tk_arena and tk_call_opts.reply_allocator (client/lib/arena.c and
 * client.c): a reply decoded into an arena is the reply decoded with
 * malloc, byte for byte, on every path a reply takes (one tkd, a fleet, a
 * READ tried again on a second node); a reset arena takes no new memory
 * for the same reply; every address is aligned; and a call that ends
 * other than OK leaves nothing in the caller's allocator. A counting
 * allocator is the negative control: a client that ignored the option
 * would leave its count at 0, and one that decoded anything else there
 * (the fleet's ListNodes) would make it differ from the reply's own.
 *
 * The server is a bare NNG REP socket in this process that answers each
 * request with what the test set (tk.v1.Request in, tk.v1.Reply out). */
#include <pthread.h>
#include <setjmp.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>

#include <tk/client.h>

#include "sample.h"
#include "tk/v1/control.pb-c.h"
#include "tk/v1/rpc.pb-c.h"
#include "tk/v1/search.pb-c.h"
#include "tk/v1/search.tk.h"

static void assert_packs_to(const ProtobufCMessage *m, const ts_packed *want)
{
    ts_packed got = ts_pack(m);
    assert_int_equal(got.len, want->len);
    assert_memory_equal(got.data, want->data, want->len);
    free(got.data);
}

/* ---- a dense SearchReply, as tkd sends for a common word ---------------- */

/* n matches, each with its path, line, text and one or two submatches,
 * packed: what a dense search's payload looks like. */
static ts_packed dense_reply(size_t n)
{
    Tk__V1__SearchReply r = TK__V1__SEARCH_REPLY__INIT;
    Tk__V1__SearchStats stats = TK__V1__SEARCH_STATS__INIT;
    stats.matched_lines = (uint32_t)n;
    stats.files_with_matches = (uint32_t)(n / 17 + 1);
    r.stats = &stats;
    r.partial = true;
    r.tool = TK__V1__SEARCH_REQUEST__TOOL__RG;
    r.n_matches = n;
    r.matches = calloc(n, sizeof(Tk__V1__SearchMatch *));
    Tk__V1__SearchMatch *m = calloc(n, sizeof *m);
    Tk__V1__SearchSubmatch *sub = calloc(2 * n, sizeof *sub);
    Tk__V1__SearchSubmatch **subp =
        calloc(2 * n, sizeof(Tk__V1__SearchSubmatch *));
    char(*paths)[32] = calloc(n, sizeof *paths);
    char(*texts)[96] = calloc(n, sizeof *texts);
    assert_true(r.matches && m && sub && subp && paths && texts);
    for (size_t i = 0; i < n; i++) {
        m[i] = (Tk__V1__SearchMatch)TK__V1__SEARCH_MATCH__INIT;
        int pl = snprintf(paths[i], sizeof paths[i], "d%02zu/f%05zu.txt",
                          i % 20, i / 17);
        int tl =
            snprintf(texts[i], sizeof texts[i],
                     "hotword %zu lorem quokka ipsum %zu quokka", i, i * 7919);
        m[i].path = (ProtobufCBinaryData){ (size_t)pl, (uint8_t *)paths[i] };
        m[i].text = (ProtobufCBinaryData){ (size_t)tl, (uint8_t *)texts[i] };
        m[i].line = 97 * i + 1;
        m[i].column = 15;
        m[i].n_submatches = 1 + i % 2;
        m[i].submatches = &subp[2 * i];
        for (size_t k = 0; k < m[i].n_submatches; k++) {
            sub[2 * i + k] =
                (Tk__V1__SearchSubmatch)TK__V1__SEARCH_SUBMATCH__INIT;
            sub[2 * i + k].start = 14 + (uint32_t)k * 20;
            sub[2 * i + k].end = 20 + (uint32_t)k * 20;
            subp[2 * i + k] = &sub[2 * i + k];
        }
        r.matches[i] = &m[i];
    }
    ts_packed p = ts_pack(&r.base);
    free(texts);
    free(paths);
    free(subp);
    free(sub);
    free(m);
    free(r.matches);
    return p;
}

/* ---- a counting allocator: the negative control ------------------------- */

typedef struct counter {
    ProtobufCAllocator a;
    size_t allocs, frees;
} counter;

static void *count_alloc(void *data, size_t size)
{
    counter *c = data;
    c->allocs++;
    return malloc(size);
}

static void count_free(void *data, void *p)
{
    counter *c = data;
    if (p != NULL)
        c->frees++;
    free(p);
}

static void counter_init(counter *c)
{
    *c = (counter){ .a = { count_alloc, count_free, c } };
}

/* How many allocations decoding p as a SearchReply takes. */
static size_t allocs_of(const ts_packed *p)
{
    counter c;
    counter_init(&c);
    ProtobufCMessage *m = protobuf_c_message_unpack(
        &tk__v1__search_reply__descriptor, &c.a, p->len, p->data);
    assert_non_null(m);
    protobuf_c_message_free_unpacked(m, &c.a);
    assert_int_equal(c.allocs, c.frees);
    return c.allocs;
}

/* ---- the arena alone ---------------------------------------------------- */

static tk_arena *arena_new(size_t hint)
{
    tk_arena *a = NULL;
    assert_int_equal(tk_arena_new(&a, hint), TK_OK);
    assert_non_null(a);
    return a;
}

/* A dense reply decoded into an arena packs to the same bytes as the one
 * decoded with malloc, and lies wholly in the arena. */
static void test_dense_reply_same_as_malloc(void **state)
{
    (void)state;
    ts_packed p = dense_reply(20000);
    ProtobufCMessage *heap = protobuf_c_message_unpack(
        &tk__v1__search_reply__descriptor, NULL, p.len, p.data);
    assert_non_null(heap);
    tk_arena *a = arena_new(0);
    ProtobufCMessage *in =
        protobuf_c_message_unpack(&tk__v1__search_reply__descriptor,
                                  tk_arena_allocator(a), p.len, p.data);
    assert_non_null(in);
    assert_packs_to(heap, &p);
    assert_packs_to(in, &p);
    const Tk__V1__SearchReply *r = (const Tk__V1__SearchReply *)in;
    assert_int_equal(r->n_matches, 20000);
    assert_int_equal(r->matches[19999]->line, 97 * 19999 + 1);
    assert_int_equal(r->matches[1]->n_submatches, 2);
    assert_int_equal(r->matches[1]->submatches[1]->end, 40);
    assert_true(r->partial);
    assert_int_equal(r->stats->matched_lines, 20000);
    /* more than the ts_packed bytes: five structures and two copies a match */
    assert_true(tk_arena_used(a) > p.len);
    assert_true(tk_arena_capacity(a) >= tk_arena_used(a));
    protobuf_c_message_free_unpacked(heap, NULL);
    tk_arena_free(a);
    free(p.data);
}

/* Every message of the catalog, every field set (nested messages,
 * repeated fields, oneofs, maps, bytes), through an arena. */
static void test_every_message(void **state)
{
    (void)state;
    tk_arena *a = arena_new(1024);
    size_t n = tk_catalog_message_count();
    assert_true(n >= 11);
    for (size_t i = 0; i < n; i++) {
        const ProtobufCMessageDescriptor *d = tk_catalog_message(i);
        for (unsigned variant = 0; variant < 3; variant++) {
            ProtobufCMessage *m = ts_sample(d, variant);
            ts_packed want = ts_pack(m);
            ProtobufCMessage *got = protobuf_c_message_unpack(
                d, tk_arena_allocator(a), want.len, want.data);
            assert_non_null(got);
            assert_packs_to(got, &want);
            free(want.data);
            protobuf_c_message_free_unpacked(m, NULL);
        }
    }
    tk_arena_free(a);
}

/* Reset keeps the chunks: the same reply decoded again and again takes no
 * new memory, and decodes the same. */
static void test_reset_reuses(void **state)
{
    (void)state;
    ts_packed p = dense_reply(5000);
    tk_arena *a = arena_new(4096);
    size_t used = 0, capacity = 0;
    for (int round = 0; round < 6; round++) {
        ProtobufCMessage *m =
            protobuf_c_message_unpack(&tk__v1__search_reply__descriptor,
                                      tk_arena_allocator(a), p.len, p.data);
        assert_non_null(m);
        assert_packs_to(m, &p);
        if (round == 0) {
            used = tk_arena_used(a);
            capacity = tk_arena_capacity(a);
        }
        assert_int_equal(tk_arena_used(a), used);
        assert_int_equal(tk_arena_capacity(a), capacity);
        tk_arena_reset(a);
        assert_int_equal(tk_arena_used(a), 0);
        assert_int_equal(tk_arena_capacity(a), capacity);
    }
    tk_arena_free(a);
    free(p.data);
}

/* Addresses aligned for any type, never overlapping, for every size (0
 * too); and a free that releases nothing. */
static void test_alignment(void **state)
{
    (void)state;
    tk_arena *a = arena_new(1024);
    ProtobufCAllocator *al = tk_arena_allocator(a);
    enum { N = 600 };
    unsigned char *p[N];
    for (size_t i = 0; i < N; i++) {
        size_t size = i % 200; /* 0..199, past the 1 KiB chunk often */
        p[i] = al->alloc(al->allocator_data, size);
        assert_non_null(p[i]);
        assert_int_equal((uintptr_t)p[i] % alignof(max_align_t), 0);
        memset(p[i], (int)(i & 0xFF), size);
        for (size_t k = 0; k < i; k++)
            assert_ptr_not_equal(p[k], p[i]);
    }
    size_t used = tk_arena_used(a);
    for (size_t i = 0; i < N; i++) {
        for (size_t k = 0; k < i % 200; k++)
            assert_int_equal(p[i][k], (unsigned char)(i & 0xFF));
        al->free(al->allocator_data, p[i]);
    }
    assert_int_equal(tk_arena_used(a), used);
    tk_arena_free(a);
}

/* An allocation larger than any chunk gets one of its own, whole; the
 * small ones go on beside it; after a reset the same one takes no new
 * memory. */
static void test_large_allocation(void **state)
{
    (void)state;
    tk_arena *a = arena_new(0);
    ProtobufCAllocator *al = tk_arena_allocator(a);
    const size_t big = (size_t)8 * 1024 * 1024 + 3;
    const size_t step = (100 + alignof(max_align_t) - 1) /
                        alignof(max_align_t) * alignof(max_align_t);
    for (int round = 0; round < 2; round++) {
        unsigned char *small = al->alloc(al->allocator_data, 100);
        unsigned char *p = al->alloc(al->allocator_data, big);
        unsigned char *after = al->alloc(al->allocator_data, 100);
        assert_non_null(small);
        assert_non_null(p);
        assert_non_null(after);
        assert_int_equal((uintptr_t)p % alignof(max_align_t), 0);
        memset(p, 0xA5, big);
        memset(small, 1, 100);
        memset(after, 2, 100);
        assert_int_equal(p[0], 0xA5);
        assert_int_equal(p[big - 1], 0xA5);
        /* the small ones share the first chunk: the large one is apart */
        assert_ptr_equal(after, small + step);
        assert_true(tk_arena_capacity(a) >= big + (size_t)64 * 1024);
        assert_true(tk_arena_capacity(a) < big + (size_t)1024 * 1024);
        tk_arena_reset(a);
    }
    /* too large to be had at all: NULL, not a wrapped size */
    assert_null(al->alloc(al->allocator_data, SIZE_MAX - 8));
    tk_arena_free(a);
    assert_int_equal(tk_arena_new(NULL, 0), TK_ERR_ARG);
    tk_arena_reset(NULL);
    tk_arena_free(NULL);
}

/* ---- through tk_call: a REP socket in this process ---------------------- */

typedef struct server {
    nng_socket sock;
    pthread_t thread;
    char url[64];
    /* What Search answers (set before each call, which orders it). */
    int code;
    ts_packed payload;
    /* ListNodes: a table, with a node that refuses connections first
     * (dead_url), or UNIMPLEMENTED (one tkd, no fleet). */
    bool fleet;
    char dead_url[64];
    _Atomic int searches;
    _Atomic int list_nodes;
} server;

static size_t list_nodes_reply(const server *s, uint8_t **out)
{
    char *roots[] = { "/" };
    Tk__V1__NodeInfo dead = TK__V1__NODE_INFO__INIT,
                     self = TK__V1__NODE_INFO__INIT;
    dead.node_id = "dead";
    dead.address = (char *)s->dead_url;
    dead.n_roots = 1;
    dead.roots = roots;
    self.node_id = "self";
    self.address = (char *)s->url;
    self.n_roots = 1;
    self.roots = roots;
    Tk__V1__NodeInfo *nodes[2] = { &dead, &self };
    Tk__V1__ListNodesReply r = TK__V1__LIST_NODES_REPLY__INIT;
    bool with_dead = s->dead_url[0] != '\0';
    r.nodes = with_dead ? nodes : nodes + 1;
    r.n_nodes = with_dead ? 2 : 1;
    r.self_id = "self";
    r.ttl_ms = 60000;
    ts_packed p = ts_pack(&r.base);
    *out = p.data;
    return p.len;
}

static nng_msg *answer(server *s, const Tk__V1__Request *req)
{
    Tk__V1__Reply rep = TK__V1__REPLY__INIT;
    Tk__V1__Status st = TK__V1__STATUS__INIT;
    rep.call_id = req->call_id;
    rep.status = &st;
    uint8_t *owned = NULL;
    if (strcmp(req->method, "tk.v1.Search/Search") == 0) {
        atomic_fetch_add(&s->searches, 1);
        st.code = (Tk__V1__Status__Code)s->code;
        st.message = s->code == TK_OK ? "" : "not here";
        if (s->code == TK_OK)
            rep.payload =
                (ProtobufCBinaryData){ s->payload.len, s->payload.data };
    } else if (strcmp(req->method, "tk.v1.Control/ListNodes") == 0 &&
               s->fleet) {
        atomic_fetch_add(&s->list_nodes, 1);
        rep.payload.len = list_nodes_reply(s, &owned);
        rep.payload.data = owned;
    } else {
        st.code = TK__V1__STATUS__CODE__UNIMPLEMENTED;
        st.message = "not served here";
    }
    nng_msg *msg = NULL;
    size_t n = tk__v1__reply__get_packed_size(&rep);
    if (nng_msg_alloc(&msg, n) == 0)
        tk__v1__reply__pack(&rep, nng_msg_body(msg));
    free(owned);
    return msg;
}

static void *serve(void *arg)
{
    server *s = arg;
    nng_msg *msg;
    while (nng_recvmsg(s->sock, &msg, 0) == 0) {
        Tk__V1__Request *req =
            tk__v1__request__unpack(NULL, nng_msg_len(msg), nng_msg_body(msg));
        nng_msg_free(msg);
        if (req == NULL)
            continue;
        nng_msg *out = answer(s, req);
        tk__v1__request__free_unpacked(req, NULL);
        if (out != NULL && nng_sendmsg(s->sock, out, 0) != 0)
            nng_msg_free(out);
    }
    return NULL;
}

/* A tcp port on 127.0.0.1 that was just bound and closed: nothing
 * listens there. */
static int closed_port(void)
{
    nng_socket sk;
    nng_listener l;
    int port = 0;
    assert_int_equal(nng_rep0_open(&sk), 0);
    assert_int_equal(nng_listen(sk, "tcp://127.0.0.1:0", &l, 0), 0);
    assert_int_equal(nng_listener_get_int(l, NNG_OPT_TCP_BOUND_PORT, &port), 0);
    nng_close(sk);
    return port;
}

static void server_start(server *s, bool fleet, bool with_dead)
{
    memset(s, 0, sizeof *s);
    s->fleet = fleet;
    if (with_dead)
        snprintf(s->dead_url, sizeof s->dead_url, "tcp://127.0.0.1:%d",
                 closed_port());
    nng_listener l;
    int port = 0;
    assert_int_equal(nng_rep0_open(&s->sock), 0);
    assert_int_equal(nng_listen(s->sock, "tcp://127.0.0.1:0", &l, 0), 0);
    assert_int_equal(nng_listener_get_int(l, NNG_OPT_TCP_BOUND_PORT, &port), 0);
    snprintf(s->url, sizeof s->url, "tcp://127.0.0.1:%d", port);
    assert_int_equal(pthread_create(&s->thread, NULL, serve, s), 0);
}

static void server_stop(server *s)
{
    nng_close(s->sock); /* ends serve's receive */
    pthread_join(s->thread, NULL);
}

static tk_client *client_open(const server *s)
{
    tk_client *c = NULL;
    char err[256] = "";
    int rv = tk_client_open(&c, s->url, err, sizeof err);
    if (rv != TK_OK)
        fail_msg("tk_client_open(%s): %d %s", s->url, rv, err);
    return c;
}

static int search(tk_client *c, ProtobufCAllocator *al, bool retry,
                  Tk__V1__SearchReply **rep, tk_status *st)
{
    Tk__V1__SearchRequest req = TK__V1__SEARCH_REQUEST__INIT;
    req.root = "/srv/corpus";
    req.query = "quokka";
    tk_call_opts opts = { .timeout_ms = 10000,
                          .retry_reads = retry,
                          .reply_allocator = al };
    return tk_search_search(c, &req, rep, &opts, st);
}

/* One Search into an arena, one with a counting allocator, one with
 * malloc: the three replies pack to the served bytes, and only the reply
 * went to the caller's allocator (exactly the allocations of decoding
 * it). */
static void check_calls(server *s, tk_client *c, bool retry)
{
    s->code = TK_OK;
    s->payload = dense_reply(3000);
    size_t want_allocs = allocs_of(&s->payload);
    tk_status st;
    Tk__V1__SearchReply *rep = NULL;

    tk_arena *a = arena_new(0);
    assert_int_equal(search(c, tk_arena_allocator(a), retry, &rep, &st), TK_OK);
    assert_non_null(rep);
    assert_packs_to(&rep->base, &s->payload);
    assert_true(tk_arena_used(a) > s->payload.len);
    tk_status_clear(&st);
    tk_arena_free(a); /* the reply with it */

    counter cnt;
    counter_init(&cnt);
    rep = NULL;
    assert_int_equal(search(c, &cnt.a, retry, &rep, &st), TK_OK);
    assert_non_null(rep);
    assert_packs_to(&rep->base, &s->payload);
    assert_int_equal(cnt.allocs, want_allocs);
    protobuf_c_message_free_unpacked(&rep->base, &cnt.a);
    assert_int_equal(cnt.frees, cnt.allocs);
    tk_status_clear(&st);

    rep = NULL;
    assert_int_equal(search(c, NULL, retry, &rep, &st), TK_OK);
    assert_packs_to(&rep->base, &s->payload);
    protobuf_c_message_free_unpacked(&rep->base, NULL);
    tk_status_clear(&st);
    free(s->payload.data);
    s->payload = (ts_packed){ 0 };
}

static void test_call_one_tkd(void **state)
{
    (void)state;
    server s;
    server_start(&s, false, false);
    tk_client *c = client_open(&s);
    check_calls(&s, c, false);
    assert_int_equal(atomic_load(&s.searches), 3);
    tk_client_close(c);
    server_stop(&s);
}

/* In a fleet: the table read at open (ListNodes) and the call routed to
 * the node that holds the path; the table's reply is not the caller's. */
static void test_call_fleet(void **state)
{
    (void)state;
    server s;
    server_start(&s, true, false);
    tk_client *c = client_open(&s);
    assert_int_equal(atomic_load(&s.list_nodes), 1);
    check_calls(&s, c, false);
    tk_status st;
    Tk__V1__SearchReply *rep = NULL;
    s.code = TK_OK;
    s.payload = dense_reply(1);
    assert_int_equal(search(c, NULL, false, &rep, &st), TK_OK);
    assert_string_equal(st.node, "self"); /* routed, not the opened URL */
    protobuf_c_message_free_unpacked(&rep->base, NULL);
    tk_status_clear(&st);
    free(s.payload.data);
    tk_client_close(c);
    server_stop(&s);
}

/* A READ whose first node refuses connections goes on to the next
 * (retry_reads), after the client reads the table again: the reply that
 * comes from the second lands in the caller's allocator, and nothing of
 * the table's reading does. */
static void test_call_retried_read(void **state)
{
    (void)state;
    server s;
    server_start(&s, true, true);
    tk_client *c = client_open(&s);
    int before = atomic_load(&s.list_nodes);
    check_calls(&s, c, true);
    /* the dead node was tried first, and the table read again after */
    assert_true(atomic_load(&s.list_nodes) > before);
    assert_int_equal(atomic_load(&s.searches), 3);
    tk_client_close(c);
    server_stop(&s);
}

/* A status other than OK: *reply NULL, and nothing taken from the
 * allocator. */
static void test_error_leaves_nothing(void **state)
{
    (void)state;
    server s;
    server_start(&s, false, false);
    tk_client *c = client_open(&s);
    s.code = TK_CODE_NOT_FOUND;
    tk_arena *a = arena_new(0);
    counter cnt;
    counter_init(&cnt);
    tk_status st;
    static Tk__V1__SearchReply sentinel;
    Tk__V1__SearchReply *rep = &sentinel; /* tk_call makes it NULL */
    assert_int_equal(search(c, tk_arena_allocator(a), false, &rep, &st),
                     TK_CODE_NOT_FOUND);
    assert_null(rep);
    assert_true(st.from_server);
    assert_int_equal(tk_arena_used(a), 0);
    tk_status_clear(&st);
    rep = &sentinel;
    assert_int_equal(search(c, &cnt.a, false, &rep, &st), TK_CODE_NOT_FOUND);
    assert_null(rep);
    assert_int_equal(cnt.allocs, 0);
    tk_status_clear(&st);
    tk_arena_free(a);
    tk_client_close(c);
    server_stop(&s);
}

/* A payload whose last match does not decode (a field of wire type 7 in
 * it), after thousands that do: INTERNAL, *reply NULL; the arena is back
 * where it stood (what it held before is intact, and the next reply
 * decodes after it), and a counting allocator got every allocation back. */
static void test_bad_payload_handed_back(void **state)
{
    (void)state;
    server s;
    server_start(&s, false, false);
    tk_client *c = client_open(&s);
    ts_packed whole = dense_reply(2000);
    static const uint8_t bad_match[] = { 0x0A, 0x01, 0x0F };
    ts_packed bad = { malloc(whole.len + sizeof bad_match),
                      whole.len + sizeof bad_match };
    assert_non_null(bad.data);
    memcpy(bad.data, whole.data, whole.len);
    memcpy(bad.data + whole.len, bad_match, sizeof bad_match);
    s.code = TK_OK;
    s.payload = bad;
    tk_arena *a = arena_new(0);
    ProtobufCAllocator *al = tk_arena_allocator(a);
    static const char mine[] = "the caller's own";
    char *kept = al->alloc(al->allocator_data, sizeof mine);
    memcpy(kept, mine, sizeof mine);
    size_t used = tk_arena_used(a), capacity = tk_arena_capacity(a);
    tk_status st;
    Tk__V1__SearchReply *rep = NULL;
    assert_int_equal(search(c, al, false, &rep, &st), TK_CODE_INTERNAL);
    assert_null(rep);
    assert_non_null(strstr(st.message, "does not decode"));
    assert_int_equal(tk_arena_used(a), used);
    assert_string_equal(kept, mine);
    /* it did take chunks for the matches that decoded, kept for reuse */
    assert_true(tk_arena_capacity(a) > capacity);
    capacity = tk_arena_capacity(a);
    tk_status_clear(&st);
    /* the arena goes on from there: the good reply decodes in the same
     * chunks */
    s.payload = whole;
    assert_int_equal(search(c, al, false, &rep, &st), TK_OK);
    assert_packs_to(&rep->base, &whole);
    assert_string_equal(kept, mine);
    assert_int_equal(tk_arena_capacity(a), capacity);
    tk_status_clear(&st);

    counter cnt;
    counter_init(&cnt);
    s.payload = bad;
    rep = NULL;
    assert_int_equal(search(c, &cnt.a, false, &rep, &st), TK_CODE_INTERNAL);
    assert_null(rep);
    assert_true(cnt.allocs > 2000); /* it decoded the good matches there, */
    assert_int_equal(cnt.frees, cnt.allocs); /* and gave them all back */
    tk_status_clear(&st);
    tk_arena_free(a);
    free(bad.data);
    free(whole.data);
    tk_client_close(c);
    server_stop(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dense_reply_same_as_malloc),
        cmocka_unit_test(test_every_message),
        cmocka_unit_test(test_reset_reuses),
        cmocka_unit_test(test_alignment),
        cmocka_unit_test(test_large_allocation),
        cmocka_unit_test(test_call_one_tkd),
        cmocka_unit_test(test_call_fleet),
        cmocka_unit_test(test_call_retried_read),
        cmocka_unit_test(test_error_leaves_nothing),
        cmocka_unit_test(test_bad_payload_handed_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
