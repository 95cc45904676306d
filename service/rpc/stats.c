/* SPDX-License-Identifier: MIT */
/* The metrics read: every family tkd keeps, as one tk.v1.StatsReply
 * (tk.v1.Control/Stats answers it; the Prometheus listener writes it out
 * as text). Counters and histograms are read from their atomics; the
 * gauges that are state (the queue, the workers, the calls in flight, the
 * connections) from that state, under its own lock, briefly. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "rpc_int.h"

/* The reply being built, in the memory of call. */
typedef struct builder {
    rpc_call *call;
    Tk__V1__StatsReply *out;
    size_t cap;
} builder;

#define MAX_FAMILIES 48

static Tk__V1__MetricFamily *family(builder *b, const char *name,
                                    const char *help,
                                    Tk__V1__MetricFamily__Type type,
                                    size_t cap_metrics)
{
    for (size_t i = 0; i < b->out->n_families; i++)
        if (strcmp(b->out->families[i]->name, name) == 0)
            return b->out->families[i];
    if (b->out->n_families == b->cap)
        abort(); /* MAX_FAMILIES is below the families defined */
    Tk__V1__MetricFamily *f = rpc_call_alloc(b->call, sizeof *f);
    tk__v1__metric_family__init(f);
    f->name = (char *)name;
    f->help = (char *)help;
    f->type = type;
    f->metrics =
        rpc_call_alloc(b->call, cap_metrics * sizeof(Tk__V1__Metric *));
    b->out->families[b->out->n_families++] = f;
    return f;
}

/* A metric of f with n label pairs (name, value, name, value, ...). */
static Tk__V1__Metric *metric(builder *b, Tk__V1__MetricFamily *f, size_t n,
                              const char *const *labels)
{
    Tk__V1__Metric *m = rpc_call_alloc(b->call, sizeof *m);
    tk__v1__metric__init(m);
    m->labels =
        rpc_call_alloc(b->call, (n > 0 ? n : 1) * sizeof(Tk__V1__LabelPair *));
    for (size_t i = 0; i < n; i++) {
        Tk__V1__LabelPair *lp = rpc_call_alloc(b->call, sizeof *lp);
        tk__v1__label_pair__init(lp);
        lp->name = (char *)labels[2 * i];
        lp->value = (char *)labels[2 * i + 1];
        m->labels[m->n_labels++] = lp;
    }
    f->metrics[f->n_metrics++] = m;
    return m;
}

static void value(builder *b, Tk__V1__MetricFamily *f, size_t n,
                  const char *const *labels, double v)
{
    metric(b, f, n, labels)->value = v;
}

/* A histogram of µs observations, written in seconds. */
static void histogram(builder *b, Tk__V1__MetricFamily *f, size_t n,
                      const char *const *labels, const obs_hist *h)
{
    Tk__V1__Histogram *hg = rpc_call_alloc(b->call, sizeof *hg);
    tk__v1__histogram__init(hg);
    hg->buckets = rpc_call_alloc(b->call, (OBS_HIST_BOUNDS + 1) *
                                              sizeof(Tk__V1__Bucket *));
    uint64_t cum = 0;
    for (size_t i = 0; i <= OBS_HIST_BOUNDS; i++) {
        Tk__V1__Bucket *bk = rpc_call_alloc(b->call, sizeof *bk);
        tk__v1__bucket__init(bk);
        cum += atomic_load_explicit(&h->bucket[i], memory_order_relaxed);
        bk->cumulative_count = cum;
        bk->upper_bound = i < OBS_HIST_BOUNDS
                              ? (double)obs_hist_bounds_us[i] / 1e6
                              : INFINITY;
        hg->buckets[hg->n_buckets++] = bk;
    }
    hg->sample_count = cum;
    hg->sample_sum =
        (double)atomic_load_explicit(&h->sum_us, memory_order_relaxed) / 1e6;
    metric(b, f, n, labels)->histogram = hg;
}

/* The method label of the frames answered without a method of this
 * server: the label's values are bounded by the method table, never by
 * what a caller sends. */
#define UNMATCHED "unknown"

static void calls(builder *b, rpc_server *srv)
{
    size_t n = srv->n_methods + 1;
    Tk__V1__MetricFamily *total =
        family(b, "tk_calls_total",
               "Calls answered, by method and status code. Method \"" UNMATCHED
               "\": a frame answered before its method was known (no "
               "tk.v1.Request, a peer of another uid, tkd shutting down) "
               "or naming no method tkd serves.",
               TK__V1__METRIC_FAMILY__TYPE__COUNTER, n * RPC_N_CODES);
    Tk__V1__MetricFamily *queue = family(
        b, "tk_call_queue_seconds",
        "How long calls waited for a worker: from receipt to their start, "
        "or to their answer if they never ran (expired or cancelled in the "
        "queue).",
        TK__V1__METRIC_FAMILY__TYPE__HISTOGRAM, n);
    Tk__V1__MetricFamily *run =
        family(b, "tk_call_run_seconds",
               "How long calls ran: from their start to their reply encoded.",
               TK__V1__METRIC_FAMILY__TYPE__HISTOGRAM, n);
    for (size_t i = 0; i < n; i++) {
        const rpc_method_stats *ms =
            i < srv->n_methods ? srv->methods[i].stats : &srv->unmatched;
        const char *name =
            i < srv->n_methods ? srv->methods[i].method->name : UNMATCHED;
        for (size_t c = 0; c < RPC_N_CODES; c++) {
            /* every method and code from the start, at 0: a rate or an
             * alert on a code not seen yet has its series */
            uint64_t v =
                atomic_load_explicit(&ms->calls[c], memory_order_relaxed);
            const char *labels[] = { "code", rpc_code_name((rpc_code)c),
                                     "method", name };
            value(b, total, 2, labels, (double)v);
        }
        const char *labels[] = { "method", name };
        if (obs_hist_count(&ms->queue) > 0)
            histogram(b, queue, 1, labels, &ms->queue);
        if (obs_hist_count(&ms->run) > 0)
            histogram(b, run, 1, labels, &ms->run);
    }
}

static double load(_Atomic uint64_t *v)
{
    return (double)atomic_load_explicit(v, memory_order_relaxed);
}

static void queue_and_workers(builder *b, rpc_server *srv)
{
    pthread_mutex_lock(&srv->pool_mu);
    size_t depth = srv->q_len, threads = srv->n_threads;
    size_t waiting = srv->n_waiting;
    pthread_mutex_unlock(&srv->pool_mu);
    size_t in_flight = 0;
    pthread_mutex_lock(&srv->reg_mu);
    for (size_t i = 0; i < srv->n_slots; i++)
        in_flight += srv->slots[i].phase == PHASE_QUEUED ||
                     srv->slots[i].phase == PHASE_RUNNING;
    pthread_mutex_unlock(&srv->reg_mu);

    value(b,
          family(b, "tk_calls_in_flight",
                 "Calls received and not yet answered: queued or running "
                 "(a Stats call counts itself).",
                 TK__V1__METRIC_FAMILY__TYPE__GAUGE, 1),
          0, NULL, (double)in_flight);
    value(b,
          family(b, "tk_queue_depth",
                 "Calls waiting now for a worker; at tk_queue_capacity, "
                 "more are refused QUEUE_FULL.",
                 TK__V1__METRIC_FAMILY__TYPE__GAUGE, 1),
          0, NULL, (double)depth);
    value(b,
          family(b, "tk_queue_capacity",
                 "The most calls that may wait for a worker (tkd "
                 "--queue-depth).",
                 TK__V1__METRIC_FAMILY__TYPE__GAUGE, 1),
          0, NULL, (double)srv->cfg.queue_depth);
    Tk__V1__MetricFamily *w =
        family(b, "tk_workers",
               "Worker threads started, busy running a call or idle; they "
               "start as calls need them, up to tkd --workers.",
               TK__V1__METRIC_FAMILY__TYPE__GAUGE, 2);
    const char *busy[] = { "state", "busy" }, *idle[] = { "state", "idle" };
    value(b, w, 1, busy, (double)(threads - waiting));
    value(b, w, 1, idle, (double)waiting);
    value(b,
          family(b, "tk_workers_max",
                 "The most worker threads tkd starts (tkd --workers).",
                 TK__V1__METRIC_FAMILY__TYPE__GAUGE, 1),
          0, NULL, (double)srv->cfg.workers);
    Tk__V1__MetricFamily *rej = family(
        b, "tk_queue_rejected_total",
        "Calls that never ran for the queue: QUEUE_FULL (refused as they "
        "came, every worker busy and the queue full) and EXPIRED_IN_QUEUE "
        "(their deadline passed while they waited).",
        TK__V1__METRIC_FAMILY__TYPE__COUNTER, 2);
    const char *full[] = { "reason", "QUEUE_FULL" };
    const char *expired[] = { "reason", "EXPIRED_IN_QUEUE" };
    value(b, rej, 1, expired, load(&srv->expired_in_queue));
    value(b, rej, 1, full, load(&srv->queue_full));
    Tk__V1__MetricFamily *cn = family(
        b, "tk_call_cancellations_total",
        "Calls that ended stopped, by the cause in their reply: CALLER "
        "(cancelled, or its connection closed), DEADLINE, SHUTDOWN, LIMIT "
        "(a partial result at the caller's limit).",
        TK__V1__METRIC_FAMILY__TYPE__COUNTER, RPC_N_CAUSES);
    for (int c = RPC_CAUSE_CALLER; c < RPC_N_CAUSES; c++) {
        const char *labels[] = { "cause", rpc_cause_name((rpc_cause)c) };
        value(b, cn, 1, labels, load(&srv->ended_by_cause[c]));
    }
}

/* When the process started, as the Prometheus client libraries say it:
 * taken before main, so within its first milliseconds, on every system. */
static double process_start;
__attribute__((constructor)) static void note_process_start(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    process_start = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void gauge(builder *b, const char *name, const char *help, double v)
{
    value(b, family(b, name, help, TK__V1__METRIC_FAMILY__TYPE__GAUGE, 1), 0,
          NULL, v);
}

/* tk_build_info and the process_* every Prometheus client library
 * exports, so that the dashboards made for them read tkd too. What a
 * system cannot tell (the resident memory on macOS) is left out. */
static void process(builder *b, const rpc_server *srv)
{
    const char *version[] = { "version", srv->version };
    value(b,
          family(b, "tk_build_info",
                 "tkd's version, in its label; the value is always 1.",
                 TK__V1__METRIC_FAMILY__TYPE__GAUGE, 1),
          1, version, 1);
    gauge(b, "process_start_time_seconds",
          "Start time of the process since unix epoch in seconds.",
          process_start);
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        value(b,
              family(b, "process_cpu_seconds_total",
                     "Total user and system CPU time spent in seconds.",
                     TK__V1__METRIC_FAMILY__TYPE__COUNTER, 1),
              0, NULL,
              (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                  (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
    int64_t rss = port_rss_bytes();
    if (rss >= 0)
        gauge(b, "process_resident_memory_bytes",
              "Resident memory size in bytes.", (double)rss);
    long fds = port_fds_open();
    if (fds >= 0)
        gauge(b, "process_open_fds", "Number of open file descriptors.",
              (double)fds);
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        gauge(b, "process_max_fds", "Maximum number of open file descriptors.",
              (double)rl.rlim_cur);
}

static void connections(builder *b, rpc_server *srv)
{
    static const char *const transports[] = { "ipc", "tcp", "tls+tcp" };
    unsigned open[3] = { 0 };
    bool seen[3] = { false };
    for (size_t i = 0; i < srv->n_listeners; i++) {
        const rpc_listener *L = &srv->listeners[i];
        int t = rpc__listener_transport(L);
        if (t < 0)
            continue;
        seen[t] = true;
        open[t] += atomic_load(&srv->listeners[i].open);
    }
    Tk__V1__MetricFamily *f =
        family(b, "tk_connections",
               "Connections open now, by transport (of the --listen URLs).",
               TK__V1__METRIC_FAMILY__TYPE__GAUGE, 3);
    for (int t = 0; t < 3; t++) {
        if (!seen[t])
            continue;
        const char *labels[] = { "transport", transports[t] };
        value(b, f, 1, labels, (double)open[t]);
    }
    Tk__V1__MetricFamily *r = family(
        b, "tk_connections_refused_total",
        "Connections closed as they came or as they began: LIMIT (their "
        "listener's limit were open, handshakes included), "
        "HANDSHAKE_TIMEOUT (the handshake did not finish within tkd "
        "--handshake-timeout-ms), TLS (the TLS handshake failed), "
        "PROTOCOL (not NNG's REQ), ACCEPT (the accept itself failed), "
        "REQUEST_TOO_LARGE (a frame over --max-request-bytes closed its "
        "connection). Read from NNG's counters once a second; a client's "
        "own close is none of them.",
        TK__V1__METRIC_FAMILY__TYPE__COUNTER, RPC_REFUSED_KINDS);
    for (int k = 0; k < RPC_REFUSED_KINDS; k++) {
        if (k == RPC_REFUSED_OTHER) /* a close, with an NNG without 08 */
            continue;
        const char *labels[] = { "reason", rpc__refused_reason(k) };
        value(b, r, 1, labels, load(&srv->refused[k]));
    }
    value(b,
          family(b, "tk_received_bytes_total",
                 "Bytes of request frames received.",
                 TK__V1__METRIC_FAMILY__TYPE__COUNTER, 1),
          0, NULL, load(&srv->bytes_in));
    value(b,
          family(b, "tk_sent_bytes_total", "Bytes of reply frames sent.",
                 TK__V1__METRIC_FAMILY__TYPE__COUNTER, 1),
          0, NULL, load(&srv->bytes_out));
}

const char *rpc__mh_closed_reason(int k)
{
    static const char *const reasons[RPC_MH_CLOSED_KINDS] = {
        [RPC_MH_LIMIT] = "LIMIT",
        [RPC_MH_HEADER_TIMEOUT] = "HEADER_TIMEOUT",
        [RPC_MH_SEND_TIMEOUT] = "SEND_TIMEOUT",
    };
    return k >= 0 && k < RPC_MH_CLOSED_KINDS ? reasons[k] : NULL;
}

/* The Prometheus listener's own (metrics_http.c), when there is one. */
static void metrics_listener(builder *b, rpc_server *srv)
{
    if (srv->cfg.metrics_listen == NULL)
        return;
    value(b,
          family(b, "tk_metrics_http_connections",
                 "Connections open now to the metrics listener (tkd "
                 "--metrics-listen), at most its limit (the log says it).",
                 TK__V1__METRIC_FAMILY__TYPE__GAUGE, 1),
          0, NULL, (double)atomic_load(&srv->mh_open));
    Tk__V1__MetricFamily *f = family(
        b, "tk_metrics_http_closed_total",
        "Connections the metrics listener closed before their answer was "
        "taken: LIMIT (its limit were open: --metrics-max-connections, or "
        "its part of tkd's descriptors if smaller; closed as they came), "
        "HEADER_TIMEOUT (no request headers within "
        "--metrics-header-timeout-ms of the accept), SEND_TIMEOUT (the "
        "answer not taken within as long again).",
        TK__V1__METRIC_FAMILY__TYPE__COUNTER, RPC_MH_CLOSED_KINDS);
    for (int k = 0; k < RPC_MH_CLOSED_KINDS; k++) {
        const char *labels[] = { "reason", rpc__mh_closed_reason(k) };
        value(b, f, 1, labels, load(&srv->mh_closed[k]));
    }
    value(b,
          family(b, "tk_metrics_http_scrapes_total",
                 "Requests for the metrics the metrics listener received; "
                 "each is answered by the first rendering after it.",
                 TK__V1__METRIC_FAMILY__TYPE__COUNTER, 1),
          0, NULL, load(&srv->mh_scrapes));
    value(b,
          family(b, "tk_metrics_http_renders_total",
                 "Renderings of the metrics for the metrics listener (a "
                 "scrape's text counts its own): at most one each "
                 "--metrics-min-interval-ms, however many scrapes wait for "
                 "it.",
                 TK__V1__METRIC_FAMILY__TYPE__COUNTER, 1),
          0, NULL, load(&srv->mh_renders));
}

/* The families other modules count (obs_metric_add, obs_metric_observe). */
static void modules(builder *b)
{
    for (int m = 0; m < OBS_M_COUNT; m++) {
        const obs_metric_def *d = &obs_metric_defs[m];
        Tk__V1__MetricFamily *f = family(
            b, d->family, d->help,
            d->type == OBS_METRIC_COUNTER ? TK__V1__METRIC_FAMILY__TYPE__COUNTER
                                          : TK__V1__METRIC_FAMILY__TYPE__GAUGE,
            OBS_M_COUNT);
        const char *labels[] = { d->label, d->value };
        value(b, f, d->label != NULL ? 1 : 0, labels,
              (double)obs_metric_value((obs_metric)m));
    }
    for (int h = 0; h < OBS_H_COUNT; h++) {
        const obs_hist_def *d = &obs_hist_defs[h];
        histogram(b,
                  family(b, d->family, d->help,
                         TK__V1__METRIC_FAMILY__TYPE__HISTOGRAM, 1),
                  0, NULL, obs_hist_of((obs_histogram)h));
    }
}

static int by_name(const void *a, const void *b)
{
    const Tk__V1__MetricFamily *const *x = a, *const *y = b;
    return strcmp((*x)->name, (*y)->name);
}

void rpc_server_stats(rpc_server *srv, rpc_call *call, ProtobufCMessage *reply)
{
    rpc__stats_fill(srv, call, (Tk__V1__StatsReply *)reply);
}

void rpc__stats_fill(rpc_server *srv, rpc_call *call, Tk__V1__StatsReply *out)
{
    builder b = { .call = call, .out = out, .cap = MAX_FAMILIES };
    out->families =
        rpc_call_alloc(call, b.cap * sizeof(Tk__V1__MetricFamily *));
    calls(&b, srv);
    queue_and_workers(&b, srv);
    connections(&b, srv);
    metrics_listener(&b, srv);
    modules(&b);
    process(&b, srv);
    qsort(out->families, out->n_families, sizeof(Tk__V1__MetricFamily *),
          by_name);
    /* As Ping says them (server.c, which is above this file). */
    out->uptime_ms = (uint64_t)((rpc_now_ns() - srv->t_start) / 1000000);
    out->server_version = srv->version;
}

/* ---- Prometheus' text format ------------------------------------------- */

static int put(tkc_buf *out, const char *s)
{
    return tkc_buf_append(out, s, strlen(s));
}

/* HELP text escapes \ and newline; a label value, " too. */
static int put_escaped(tkc_buf *out, const char *s, bool quote)
{
    int rv = 0;
    for (; rv == 0 && *s != '\0'; s++) {
        if (*s == '\\')
            rv = put(out, "\\\\");
        else if (*s == '\n')
            rv = put(out, "\\n");
        else if (*s == '"' && quote)
            rv = put(out, "\\\"");
        else
            rv = tkc_buf_append(out, s, 1);
    }
    return rv;
}

/* The shortest of %.15g, %.16g, %.17g that reads back as v; +Inf. */
static void number(char *buf, size_t len, double v)
{
    if (isinf(v)) {
        snprintf(buf, len, v > 0 ? "+Inf" : "-Inf");
        return;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

/* name{labels,extra="extra_value"} value */
static int sample(tkc_buf *out, const char *name, const char *suffix,
                  const Tk__V1__Metric *m, const char *extra,
                  const char *extra_value, double v)
{
    char num[40];
    int rv = put(out, name);
    rv = rv == 0 ? put(out, suffix) : rv;
    size_t n = m->n_labels + (extra != NULL);
    for (size_t i = 0; rv == 0 && i < n; i++) {
        const char *ln = i < m->n_labels ? m->labels[i]->name : extra;
        const char *lv = i < m->n_labels ? m->labels[i]->value : extra_value;
        rv = put(out, i == 0 ? "{" : ",");
        rv = rv == 0 ? put(out, ln) : rv;
        rv = rv == 0 ? put(out, "=\"") : rv;
        rv = rv == 0 ? put_escaped(out, lv, true) : rv;
        rv = rv == 0 ? put(out, "\"") : rv;
    }
    if (rv == 0 && n > 0)
        rv = put(out, "}");
    number(num, sizeof num, v);
    rv = rv == 0 ? put(out, " ") : rv;
    rv = rv == 0 ? put(out, num) : rv;
    return rv == 0 ? put(out, "\n") : rv;
}

static int histogram_text(tkc_buf *out, const char *name,
                          const Tk__V1__Metric *m)
{
    const Tk__V1__Histogram *h = m->histogram;
    int rv = 0;
    for (size_t i = 0; rv == 0 && i < h->n_buckets; i++) {
        char le[40];
        number(le, sizeof le, h->buckets[i]->upper_bound);
        rv = sample(out, name, "_bucket", m, "le", le,
                    (double)h->buckets[i]->cumulative_count);
    }
    rv = rv == 0 ? sample(out, name, "_sum", m, NULL, NULL, h->sample_sum) : rv;
    return rv == 0 ? sample(out, name, "_count", m, NULL, NULL,
                            (double)h->sample_count)
                   : rv;
}

int rpc__stats_text(const Tk__V1__StatsReply *st, tkc_buf *out)
{
    static const char *const types[] = {
        [TK__V1__METRIC_FAMILY__TYPE__TYPE_UNSPECIFIED] = "untyped",
        [TK__V1__METRIC_FAMILY__TYPE__COUNTER] = "counter",
        [TK__V1__METRIC_FAMILY__TYPE__GAUGE] = "gauge",
        [TK__V1__METRIC_FAMILY__TYPE__HISTOGRAM] = "histogram",
    };
    int rv = 0;
    for (size_t i = 0; rv == 0 && i < st->n_families; i++) {
        const Tk__V1__MetricFamily *f = st->families[i];
        rv = put(out, "# HELP ");
        rv = rv == 0 ? put(out, f->name) : rv;
        rv = rv == 0 ? put(out, " ") : rv;
        rv = rv == 0 ? put_escaped(out, f->help, false) : rv;
        rv = rv == 0 ? put(out, "\n# TYPE ") : rv;
        rv = rv == 0 ? put(out, f->name) : rv;
        rv = rv == 0 ? put(out, " ") : rv;
        rv = rv == 0 ? put(out, types[f->type]) : rv;
        rv = rv == 0 ? put(out, "\n") : rv;
        for (size_t j = 0; rv == 0 && j < f->n_metrics; j++) {
            const Tk__V1__Metric *m = f->metrics[j];
            if (f->type == TK__V1__METRIC_FAMILY__TYPE__HISTOGRAM)
                rv = histogram_text(out, f->name, m);
            else
                rv = sample(out, f->name, "", m, NULL, NULL, m->value);
        }
    }
    return rv;
}
