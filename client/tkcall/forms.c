/* SPDX-License-Identifier: MIT */
/* The text forms of replies, continued: Orders' and Control's (a line an
 * order, a node, a metric), and the table of every method's form with the
 * request field that bounds its results (tkcall_text_print,
 * tkcall_limit_field).
 *
 * Owns: which method has which form, and the reply type it expects.
 * May call: render.c (the Search and Git forms, painting), libc's stdio.
 * Must never: print a reply of a type its form does not expect. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "tk/v1/control.pb-c.h"
#include "tk/v1/git.pb-c.h"
#include "tk/v1/orders.pb-c.h"
#include "tk/v1/search.pb-c.h"

#include "tkcall_int.h"

/* ---- Orders: a line an order, "order ID STATE ..." ---------------------- */

static void render_create_order(const tkcall_text *t,
                                const ProtobufCMessage *req,
                                const ProtobufCMessage *rep)
{
    (void)req;
    fprintf(t->out, "order %lld OPEN\n",
            (long long)((const Tk__V1__CreateOrderReply *)rep)->id);
}

static void render_add_item(const tkcall_text *t, const ProtobufCMessage *req,
                            const ProtobufCMessage *rep)
{
    const Tk__V1__AddItemRequest *q = (const Tk__V1__AddItemRequest *)req;
    fprintf(t->out, "order %lld item %lld %s\n", (long long)q->order_id,
            (long long)((const Tk__V1__AddItemReply *)rep)->item_id,
            q->sku != NULL ? q->sku : "");
}

static void render_close_order(const tkcall_text *t,
                               const ProtobufCMessage *req,
                               const ProtobufCMessage *rep)
{
    fprintf(t->out, "order %lld CLOSED%s\n",
            (long long)((const Tk__V1__CloseOrderRequest *)req)->order_id,
            ((const Tk__V1__CloseOrderReply *)rep)->outcome ==
                    TK__V1__CLOSE_ORDER_REPLY__OUTCOME__ALREADY_CLOSED
                ? " (already)"
                : "");
}

static void render_reopen_order(const tkcall_text *t,
                                const ProtobufCMessage *req,
                                const ProtobufCMessage *rep)
{
    fprintf(t->out, "order %lld OPEN%s\n",
            (long long)((const Tk__V1__ReopenOrderRequest *)req)->order_id,
            ((const Tk__V1__ReopenOrderReply *)rep)->outcome ==
                    TK__V1__REOPEN_ORDER_REPLY__OUTCOME__ALREADY_OPEN
                ? " (already)"
                : "");
}

static void render_get_order(const tkcall_text *t, const ProtobufCMessage *req,
                             const ProtobufCMessage *rep)
{
    const Tk__V1__GetOrderReply *r = (const Tk__V1__GetOrderReply *)rep;
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
        &tk__v1__get_order_reply__status__descriptor, (int)r->status);
    fprintf(t->out, "order %lld %s %llu items",
            (long long)((const Tk__V1__GetOrderRequest *)req)->order_id,
            v != NULL ? v->name : "?", (unsigned long long)r->item_count);
    if (r->closed_at != NULL && r->closed_at[0] != '\0')
        fprintf(t->out, " closed %s", r->closed_at);
    tkcall__puts_raw(t, "\n");
}

/* A line a node: its id (the answering one marked *), address, "draining"
 * or "live", its heartbeat's age, and its roots. */
static void render_list_nodes(const tkcall_text *t, const ProtobufCMessage *req,
                              const ProtobufCMessage *rep)
{
    (void)req;
    const Tk__V1__ListNodesReply *r = (const Tk__V1__ListNodesReply *)rep;
    if (r->n_nodes == 0)
        tkcall__puts_raw(t, "no fleet: this tkd is no member of one\n");
    for (size_t i = 0; i < r->n_nodes; i++) {
        const Tk__V1__NodeInfo *n = r->nodes[i];
        tkcall__paint_s(t, SGR_NEW, n->node_id);
        fprintf(t->out, "%s %s %s %.1fs",
                strcmp(n->node_id, r->self_id) == 0 ? "*" : "", n->address,
                n->draining ? "draining" : "live",
                (double)n->heartbeat_age_ms / 1000.0);
        for (size_t k = 0; k < n->n_roots; k++)
            fprintf(t->out, " %s", n->roots[k]);
        tkcall__puts_raw(t, "\n");
    }
}

/* ---- Stats -------------------------------------------------------------- */

/* A duration in seconds as people read it: "850µs", "12.5ms", "3.2s". */
static void put_duration(const tkcall_text *t, double s)
{
    if (isinf(s))
        fputs("+Inf", t->out);
    else if (s < 0.001)
        fprintf(t->out, "%.0fµs", s * 1e6);
    else if (s < 1)
        fprintf(t->out, "%.3gms", s * 1e3);
    else
        fprintf(t->out, "%.3gs", s);
}

/* The upper bound of the bucket the q-th quantile falls in. */
static double quantile_bound(const Tk__V1__Histogram *h, double q)
{
    double want = q * (double)h->sample_count;
    for (size_t i = 0; i < h->n_buckets; i++)
        if ((double)h->buckets[i]->cumulative_count >= want)
            return h->buckets[i]->upper_bound;
    return INFINITY;
}

/* Where a metric's value starts. */
#define STATS_COLUMN 48

/* Pads from n characters written to the value's column. */
static void pad_to_value(const tkcall_text *t, int n)
{
    fprintf(t->out, "%*s", n < STATS_COLUMN ? STATS_COLUMN - n : 2, "");
}

/* A metric's label values, two spaces apart, the method's first (people
 * look for a method, then its code); the characters written. */
static int put_labels(const tkcall_text *t, const Tk__V1__Metric *m)
{
    int n = fprintf(t->out, "  ");
    bool first = true;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < m->n_labels; i++) {
            bool method = strcmp(m->labels[i]->name, "method") == 0;
            if (method != (pass == 0))
                continue;
            n +=
                fprintf(t->out, "%s%s", first ? "" : "  ", m->labels[i]->value);
            first = false;
        }
    }
    return n;
}

/* The value: a number, or a histogram's count, mean, and the bucket
 * bounds that hold p50 and p99. */
static void put_metric_value(const tkcall_text *t, const Tk__V1__Metric *m)
{
    const Tk__V1__Histogram *h = m->histogram;
    if (h == NULL) {
        fprintf(t->out, "%.15g\n", m->value);
        return;
    }
    fprintf(t->out, "%llu", (unsigned long long)h->sample_count);
    if (h->sample_count > 0) {
        fputs("  mean ", t->out);
        put_duration(t, h->sample_sum / (double)h->sample_count);
        fputs("  p50 <= ", t->out);
        put_duration(t, quantile_bound(h, 0.5));
        fputs("  p99 <= ", t->out);
        put_duration(t, quantile_bound(h, 0.99));
    }
    tkcall__puts_raw(t, "\n");
}

/* A metric family: its name (bold) and value on one line when it has one
 * metric without labels; else its name, then a line a metric: its label
 * values and its value. tkcall -o json has every bucket and the help. */
static void render_stats(const tkcall_text *t, const ProtobufCMessage *req,
                         const ProtobufCMessage *rep)
{
    (void)req;
    const Tk__V1__StatsReply *r = (const Tk__V1__StatsReply *)rep;
    fprintf(t->out, "tkd %s, up %.1fs\n", r->server_version,
            (double)r->uptime_ms / 1000.0);
    for (size_t i = 0; i < r->n_families; i++) {
        const Tk__V1__MetricFamily *f = r->families[i];
        tkcall__paint_s(t, SGR_META, f->name);
        if (f->n_metrics == 1 && f->metrics[0]->n_labels == 0) {
            pad_to_value(t, (int)strlen(f->name));
            put_metric_value(t, f->metrics[0]);
            continue;
        }
        tkcall__puts_raw(t, f->n_metrics == 0 ? "  (none yet)\n" : "\n");
        for (size_t j = 0; j < f->n_metrics; j++) {
            pad_to_value(t, put_labels(t, f->metrics[j]));
            put_metric_value(t, f->metrics[j]);
        }
    }
}

/* ---- the table ---------------------------------------------------------- */

/* Each method with a text form; its reply's type, checked before the cast
 * (a tkd of another version could answer with another); and the request
 * field that bounds its results, for the partial notice. */
static const struct {
    const char *method;
    const ProtobufCMessageDescriptor *reply;
    render_fn render;
    const char *limit;
} renderers[] = {
    { "tk.v1.Search/Search", &tk__v1__search_reply__descriptor,
      tkcall__render_search, "limit" },
    { "tk.v1.Git/Grep", &tk__v1__git_grep_reply__descriptor,
      tkcall__render_grep, "maxMatches" },
    { "tk.v1.Git/Log", &tk__v1__git_log_reply__descriptor, tkcall__render_log,
      "maxCount" },
    { "tk.v1.Git/Status", &tk__v1__git_status_reply__descriptor,
      tkcall__render_status, NULL },
    { "tk.v1.Git/Diff", &tk__v1__git_diff_reply__descriptor,
      tkcall__render_diff, NULL },
    { "tk.v1.Git/RevParse", &tk__v1__git_rev_parse_reply__descriptor,
      tkcall__render_revparse, NULL },
    { "tk.v1.Git/Commit", &tk__v1__git_commit_reply__descriptor,
      tkcall__render_commit, NULL },
    { "tk.v1.Git/Checkout", &tk__v1__git_checkout_reply__descriptor,
      tkcall__render_checkout, NULL },
    { "tk.v1.Git/WorktreeAdd", &tk__v1__git_worktree_add_reply__descriptor,
      tkcall__render_worktree, NULL },
    { "tk.v1.Git/WorktreeRemove",
      &tk__v1__git_worktree_remove_reply__descriptor, tkcall__render_nothing,
      NULL },
    { "tk.v1.Git/ConfigSet", &tk__v1__git_config_set_reply__descriptor,
      tkcall__render_nothing, NULL },
    { "tk.v1.Git/ConfigGet", &tk__v1__git_config_get_reply__descriptor,
      tkcall__render_config_get, NULL },
    { "tk.v1.Orders/CreateOrder", &tk__v1__create_order_reply__descriptor,
      render_create_order, NULL },
    { "tk.v1.Orders/AddItem", &tk__v1__add_item_reply__descriptor,
      render_add_item, NULL },
    { "tk.v1.Orders/CloseOrder", &tk__v1__close_order_reply__descriptor,
      render_close_order, NULL },
    { "tk.v1.Orders/ReopenOrder", &tk__v1__reopen_order_reply__descriptor,
      render_reopen_order, NULL },
    { "tk.v1.Orders/GetOrder", &tk__v1__get_order_reply__descriptor,
      render_get_order, NULL },
    { "tk.v1.Control/ListNodes", &tk__v1__list_nodes_reply__descriptor,
      render_list_nodes, NULL },
    { "tk.v1.Control/Stats", &tk__v1__stats_reply__descriptor, render_stats,
      NULL },
};

static int find_method(const char *method)
{
    for (size_t i = 0; i < sizeof renderers / sizeof renderers[0]; i++)
        if (strcmp(renderers[i].method, method) == 0)
            return (int)i;
    return -1;
}

bool tkcall_text_print(const tkcall_text *t, const char *method,
                       const ProtobufCMessage *request,
                       const ProtobufCMessage *reply)
{
    int i = find_method(method);
    if (i < 0 || reply->descriptor != renderers[i].reply)
        return false;
    renderers[i].render(t, request, reply);
    return true;
}

const char *tkcall_limit_field(const char *method)
{
    int i = find_method(method);
    return i >= 0 ? renderers[i].limit : NULL;
}
