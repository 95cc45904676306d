/* SPDX-License-Identifier: MIT */
/* libtkclient's routing in a fleet: which node of the table a method
 * goes to (round robin, the node whose roots hold the path, the node the
 * caller names), and the test seam that routes on a table of its own.
 *
 * Owns: tk__route_kind_of, tk__path_of, tk__route and the reasons routing
 * gives. May call: node.c, status.c, the catalog. Must never: send a call, read
 * or change the table (table.c does); print or log. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tk/client.h>

#include "client_int.h"
#include "common/common.h"
#include "test_seams.h"

route_kind tk__route_kind_of(const char *method)
{
    if (strncmp(method, "tk.v1.Git/", 10) == 0 ||
        strncmp(method, "tk.v1.Search/", 13) == 0)
        return ROUTE_PATH;
    if (strncmp(method, "tk.v1.Services/", 15) == 0)
        return ROUTE_NAMED;
    return ROUTE_ANY;
}

/* The request's first non-empty field marked (tk.v1.path) = PATH_IN_ROOTS,
 * or NULL: a string inside m. */
const char *tk__path_of(const ProtobufCMessage *m)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        if (f->type != PROTOBUF_C_TYPE_STRING ||
            f->label == PROTOBUF_C_LABEL_REPEATED)
            continue;
        const tk_field_note *note = tk_catalog_find_field(d->name, f->name);
        if (note == NULL || note->path != TK_PATH_IN_ROOTS)
            continue;
        if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) != 0 &&
            *(const uint32_t *)((const char *)m + f->quantifier_offset) !=
                f->id)
            continue;
        const char *v = *(char *const *)((const char *)m + f->offset);
        if (v != NULL && v[0] != '\0')
            return v;
    }
    return NULL;
}

/* How much of path root holds, by whole components: its length, 0 when it
 * holds none of it ("/" holds every absolute path, as length 1). */
static size_t root_holds(const char *root, const char *path)
{
    size_t n = strlen(root);
    while (n > 1 && root[n - 1] == '/')
        n--;
    if (n == 0 || path[0] != '/')
        return 0;
    if (n == 1 && root[0] == '/')
        return 1;
    if (strncmp(root, path, n) != 0)
        return 0;
    return path[n] == '\0' || path[n] == '/' ? n : 0;
}

static size_t node_holds(const node *n, const char *path)
{
    size_t best = 0;
    for (size_t i = 0; i < n->n_roots; i++) {
        size_t l = root_holds(n->roots[i], path);
        if (l > best)
            best = l;
    }
    return best;
}

static bool was_tried(node *const *tried, size_t n_tried, const node *n)
{
    for (size_t i = 0; i < n_tried; i++)
        if (tried[i] == n)
            return true;
    return false;
}

/* The nodes, said for a message: "a, b (down), c (draining)", or with
 * roots "a: /r1 /r2; b: /r3". */
static void say_nodes(char *buf, size_t len, node *const *nodes, size_t n,
                      bool roots)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && at < len; i++) {
        const node *x = nodes[i];
        int k = snprintf(buf + at, len - at, "%s%s%s%s%s",
                         i > 0 ? (roots ? "; " : ", ") : "", x->id,
                         x->down ? " (down)" : "",
                         x->draining ? " (draining)" : "", roots ? ":" : "");
        if (k < 0)
            return;
        at += (size_t)k;
        for (size_t r = 0; roots && r < x->n_roots && at < len; r++) {
            k = snprintf(buf + at, len - at, " %s", x->roots[r]);
            if (k < 0)
                return;
            at += (size_t)k;
        }
    }
}

void tk__set_reason(tk_status *st, const char *reason)
{
    char *r = strdup(reason);
    if (r != NULL) {
        free(st->reason);
        st->reason = r;
    }
}

/* A node named by the caller: its index, or -1 (UNKNOWN_NODE). */
static int route_named(node *const *nodes, size_t n, const char *named,
                       tk_status *st)
{
    char list[768];
    for (size_t i = 0; i < n; i++)
        if (strcmp(nodes[i]->id, named) == 0)
            return (int)i;
    say_nodes(list, sizeof list, nodes, n, false);
    tk__local_status(st, TK_CODE_NOT_FOUND, TK_CAUSE_NONE,
                     "no node \"%s\" in the fleet; its nodes are %s", named,
                     list);
    tk__set_reason(st, "UNKNOWN_NODE");
    return -1;
}

/* The node whose roots hold path longest, live and not tried yet; -1 with
 * NO_NODE_FOR_PATH (none holds it) or NO_LIVE_NODE (none that does can
 * take it). */
static int route_path(node *const *nodes, size_t n, const char *path,
                      node *const *tried, size_t n_tried, tk_status *st)
{
    char list[768];
    size_t best = 0;
    for (size_t i = 0; i < n; i++) {
        size_t l = node_holds(nodes[i], path);
        best = l > best ? l : best;
    }
    for (size_t i = 0; best > 0 && i < n; i++) {
        const node *x = nodes[i];
        if (node_holds(x, path) == best && !x->down && !x->draining &&
            !was_tried(tried, n_tried, x))
            return (int)i;
    }
    say_nodes(list, sizeof list, nodes, n, true);
    if (best == 0) {
        tk__local_status(
            st, TK_CODE_NOT_FOUND, TK_CAUSE_NONE,
            "no node of the fleet holds %s: the nodes' roots are %s", path,
            list);
        tk__set_reason(st, "NO_NODE_FOR_PATH");
    } else {
        tk__local_status(st, TK_CODE_UNAVAILABLE, TK_CAUSE_NONE,
                         "no node that holds %s can take the call%s: %s", path,
                         n_tried > 0 ? " now" : "", list);
        tk__set_reason(st, "NO_LIVE_NODE");
    }
    return -1;
}

/* Any live node not tried yet, round robin from *rr (advanced); -1 with
 * NO_LIVE_NODE. */
static int route_any(node *const *nodes, size_t n, size_t *rr,
                     node *const *tried, size_t n_tried, tk_status *st)
{
    char list[768];
    for (size_t k = 0; k < n; k++) {
        size_t i = (*rr + k) % n;
        const node *x = nodes[i];
        if (x->down || x->draining || was_tried(tried, n_tried, x))
            continue;
        *rr = i + 1;
        return (int)i;
    }
    say_nodes(list, sizeof list, nodes, n, false);
    tk__local_status(st, TK_CODE_UNAVAILABLE, TK_CAUSE_NONE,
                     "no live node of the fleet can take the call: %s", list);
    tk__set_reason(st, "NO_LIVE_NODE");
    return -1;
}

/* The node for a call: its index in nodes, or -1 with *st said. rr: the
 * round robin's next (advanced); tried: the nodes this call has tried
 * already, which it does not try again. Under the client's mu. */
int tk__route(node *const *nodes, size_t n, const char *method,
              const char *path, const char *named, size_t *rr,
              node *const *tried, size_t n_tried, tk_status *st)
{
    if (named != NULL && named[0] != '\0')
        return route_named(nodes, n, named, st);
    route_kind kind = tk__route_kind_of(method);
    if (kind == ROUTE_NAMED) {
        char list[768];
        if (n == 1)
            return 0;
        say_nodes(list, sizeof list, nodes, n, false);
        tk__local_status(
            st, TK_CODE_INVALID_ARGUMENT, TK_CAUSE_NONE,
            "%s works on one machine's registrations: name its node "
            "(tk_call_opts.node, tkcall --node); the nodes are %s",
            method, list);
        tk__set_reason(st, "NODE_REQUIRED");
        return -1;
    }
    if (kind == ROUTE_PATH && path != NULL)
        return route_path(nodes, n, path, tried, n_tried, st);
    /* Any live node; and a Git or Search request without a path, which
     * tkd refuses as it would anywhere. */
    return route_any(nodes, n, rr, tried, n_tried, st);
}

/* A node of tk__test_route's table, with no socket; NULL out of memory. */
static node *test_node(const tk__test_node *t)
{
    node *x = tk__node_new(t->id, "", 0);
    const char *r = t->roots != NULL ? t->roots : "";
    size_t count = r[0] != '\0';
    for (const char *p = r; *p != '\0'; p++)
        count += *p == ':';
    if (x == NULL || (x->roots = calloc(count + 1, sizeof(char *))) == NULL) {
        tk__node_unref(x);
        return NULL;
    }
    x->draining = t->draining;
    x->down = t->down;
    /* None yet, as tk__node_new made it: said here, where clang-analyzer,
     * which does not read node.c, sees it. */
    x->n_roots = 0;
    for (const char *p = r; x->n_roots < count;) {
        const char *colon = strchr(p, ':');
        size_t l = colon != NULL ? (size_t)(colon - p) : strlen(p);
        if ((x->roots[x->n_roots] = strndup(p, l)) == NULL) {
            tk__node_unref(x);
            return NULL;
        }
        x->n_roots++;
        p = colon != NULL ? colon + 1 : p + l;
    }
    return x;
}

int tk__test_route(const tk__test_node *nodes, size_t n, const char *method,
                   const void *payload, size_t len, const char *named,
                   size_t *rr, tk_status *st)
{
    memset(st, 0, sizeof *st);
    node **v = calloc(n > 0 ? n : 1, sizeof(node *));
    bool made = v != NULL;
    for (size_t k = 0; made && k < n; k++)
        made = (v[k] = test_node(&nodes[k])) != NULL;
    const tk_method_desc *md = tk_catalog_find_method(method);
    ProtobufCMessage *m =
        md != NULL && made
            ? protobuf_c_message_unpack(md->request, NULL, len, payload)
            : NULL;
    const char *path = m != NULL && tk__route_kind_of(method) == ROUTE_PATH
                           ? tk__path_of(m)
                           : NULL;
    int i = made ? tk__route(v, n, method, path, named, rr, NULL, 0, st) : -1;
    if (i >= 0)
        tk__local_status(st, TK_OK, TK_CAUSE_NONE, "routed");
    else if (!made)
        tk__local_status(st, TK_CODE_INTERNAL, TK_CAUSE_NONE, "out of memory");
    if (m != NULL)
        protobuf_c_message_free_unpacked(m, NULL);
    for (size_t k = 0; v != NULL && k < n; k++)
        tk__node_unref(v[k]);
    free(v);
    return i;
}
