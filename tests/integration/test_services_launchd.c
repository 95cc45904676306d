/* SPDX-License-Identifier: MIT */
/* tk.v1.Services on the launchd backend, against the launchctl model
 * (tests/fakes/launchctl): bootout returns before the job leaves the
 * domain, and a bootstrap meanwhile fails with "Input/output error". Each
 * positive test has its control: the naive `bootout; bootstrap` fails
 * against the same model; the check that finds interleaved sequences finds
 * a constructed one.
 *
 * On macOS with TK_TEST_LAUNCHCTL=real (the macOS CI job), the group
 * services-launchd-real runs too: register, unchanged, re-register (the
 * bootout race, met for real), four re-registers of one label at once,
 * repair and unregister, against /bin/launchctl and /usr/bin/plutil in the
 * user's own domain (gui/<uid>, else user/<uid>), each call recorded in the
 * log the model writes (tests/fakes/recorder), with labels
 * dev.tk.test.<pid>.<n>.* whose plists live in the fixture's home. The
 * teardown boots every one of them out and removes its plist, after a
 * failed test too; a run killed before its teardown is swept by the next.
 * Without it (Linux, and by default) that group is skipped, each test
 * saying why. Model only, as they need launchd to do what it does only
 * sometimes or never on a healthy machine: the naive sequence's failure,
 * teardown times and a teardown that outlasts the bound, the gap after
 * print, a refused plist and plutil's refusal, a cancel landing mid-
 * teardown, two labels' held teardowns overlapping, a machine without a
 * GUI domain, a job's scripted exit. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "services_fx.h"
#include "support.h"

static int setup_plutil(void **state)
{
    fx_opts o = { .plutil = true };
    return fx_setup_with(state, &o);
}

/* ---- Register runs in a thread (no cmocka asserts there) ------------------
 */

typedef struct job {
    fx *f;
    spec s;
    tk_cancel *cancel;
    int code;
    int action;
    unsigned attempts;
    bool write_completed;
    int cause;
    char reason[64];
    pthread_t thread;
} job;

static void *job_main(void *arg)
{
    job *j = arg;
    Tk__V1__ServiceRegisterReply *rep = NULL;
    tk_status st;
    j->code = call_register(j->f, &j->s, LAUNCHD, &rep, &st, j->cancel);
    if (rep != NULL) {
        j->action = rep->action;
        j->attempts = rep->attempts;
        protobuf_c_message_free_unpacked(&rep->base, NULL);
    }
    j->write_completed = st.write_completed;
    j->cause = st.cause;
    snprintf(j->reason, sizeof j->reason, "%s", st.reason);
    tk_status_clear(&st);
    return NULL;
}

static void job_start(job *j, fx *f, const char *label, const char *word)
{
    memset(j, 0, sizeof *j);
    j->f = f;
    spec_v(&j->s, label, word);
    assert_int_equal(pthread_create(&j->thread, NULL, job_main, j), 0);
}

static void job_join(job *j)
{
    assert_int_equal(pthread_join(j->thread, NULL), 0);
}

/* ---- held teardowns -----------------------------------------------------
 */

/* From now on a bootout's teardown lasts until the file done exists
 * (end_teardowns): the test decides when the labels leave, after it has
 * seen what must happen during the teardown, rather than hoping that it
 * happens within some real time. */
static void hold_teardowns(fx *f, char *done, size_t len)
{
    join(done, len, f->base.dir, "teardowns-done");
    char cfg[PATH_MAX * 2];
    snprintf(cfg, sizeof cfg, "\"teardown_until\": \"%s\"", done);
    fx_config(f, cfg);
}

static void end_teardowns(const char *done)
{
    write_file(done, "");
}

/* ---- reading the log --------------------------------------------------------
 */

static size_t find(const call_log *l, size_t from, const char *verb,
                   const char *has)
{
    for (size_t i = from; i < l->n; i++)
        if (strcmp(l->v[i].tool, "launchctl") == 0 &&
            strcmp(l->v[i].verb, verb) == 0 &&
            (has == NULL || strstr(l->v[i].argv, has) != NULL))
            return i;
    return (size_t)-1;
}

/* The launchctl calls that change a label, in log order, must form whole
 * rounds — [bootout] enable bootstrap... (failed attempts, then one that
 * loaded) — never a call of one round inside another. */
static bool whole_rounds(const char *const *verbs, const bool *ok, size_t n,
                         size_t *rounds)
{
    enum { IDLE, OUT, ENABLED } at = IDLE;
    *rounds = 0;
    for (size_t i = 0; i < n; i++) {
        const char *v = verbs[i];
        if (strcmp(v, "bootout") == 0 && at == IDLE)
            at = OUT;
        else if (strcmp(v, "enable") == 0 && at != ENABLED)
            at = ENABLED;
        else if (strcmp(v, "bootstrap") == 0 && at == ENABLED) {
            if (ok[i]) {
                at = IDLE;
                ++*rounds;
            }
        } else
            return false;
    }
    return at == IDLE;
}

static bool label_rounds(const call_log *l, size_t from, const char *label,
                         size_t *rounds)
{
    const char *verbs[256];
    bool ok[256];
    size_t n = 0;
    char plist[256];
    snprintf(plist, sizeof plist, "/%s.plist", label);
    for (size_t i = from; i < l->n && n < 256; i++) {
        const call_rec *c = &l->v[i];
        bool ours =
            strstr(c->argv, plist) != NULL ||
            (strlen(c->argv) > strlen(label) &&
             strcmp(c->argv + strlen(c->argv) - strlen(label), label) == 0);
        if (strcmp(c->tool, "launchctl") != 0 || !mutating(c) || !ours)
            continue;
        verbs[n] = c->verb;
        ok[n++] = c->exit == 0;
    }
    return whole_rounds(verbs, ok, n, rounds);
}

/* ---- the basics
 * -------------------------------------------------------------- */

static void test_register_then_unchanged(void **state)
{
    fx *f = *state;
    spec s;
    spec_v(&s, "dev.example.a", "v1");
    assert_int_equal(register_ok(f, &s, LAUNCHD, A_INSTALLED), 1);
    assert_installed(f, &s, LAUNCHD);
    char path[PATH_MAX];
    def_path(path, sizeof path, f, "dev.example.a", LAUNCHD);
    struct stat st1;
    assert_int_equal(stat(path, &st1), 0);
    assert_int_equal(st1.st_mode & 07777, 0644);

    size_t before = log_size(f);
    assert_int_equal(register_ok(f, &s, LAUNCHD, A_UNCHANGED), 0);
    call_log l;
    log_read(f, &l);
    assert_true(l.n > before); /* it looked (print) ... */
    assert_int_equal(count_mutating(&l, before),
                     0); /* ... and changed nothing */
    log_free(&l);
    struct stat st2;
    assert_int_equal(stat(path, &st2), 0);
    assert_int_equal(st1.st_ino, st2.st_ino); /* not even rewritten */
}

static void test_changed_spec_one_round(void **state)
{
    fx *f = *state;
    spec s;
    spec_v(&s, "dev.example.b", "v1");
    register_ok(f, &s, LAUNCHD, A_INSTALLED);
    size_t before = log_size(f);
    spec_v(&s, "dev.example.b", "v2");
    assert_int_equal(register_ok(f, &s, LAUNCHD, A_UPDATED), 1);
    call_log l;
    log_read(f, &l);
    assert_int_equal(count_calls(&l, before, "launchctl", "bootout", NULL), 1);
    assert_int_equal(count_calls(&l, before, "launchctl", "enable", NULL), 1);
    assert_int_equal(count_calls(&l, before, "launchctl", "bootstrap", NULL),
                     1);
    assert_int_equal(count_mutating(&l, before), 3);
    /* in this order: bootout, print until gone, enable, bootstrap */
    size_t out = find(&l, before, "bootout", NULL);
    size_t gone = out;
    while (gone < l.n &&
           !(strcmp(l.v[gone].verb, "print") == 0 && l.v[gone].exit != 0))
        gone++;
    assert_true(gone < find(&l, before, "enable", NULL));
    assert_true(find(&l, before, "enable", NULL) <
                find(&l, before, "bootstrap", NULL));
    log_free(&l);
}

/* Negative control: the model has the race. bootout and, at once,
 * bootstrap — the naive upgrade — fails with the Input/output error. */
static void test_naive_sequence_fails(void **state)
{
    fx *f = *state;
    spec s;
    spec_v(&s, "dev.example.naive", "v1");
    register_ok(f, &s, LAUNCHD, A_INSTALLED);
    /* the teardown lasts until `done` exists: the bootstrap comes inside
     * it however long the second launchctl takes to start */
    char done[PATH_MAX];
    hold_teardowns(f, done, sizeof done);
    char target[256], domain[64], path[PATH_MAX];
    snprintf(domain, sizeof domain, "gui/%u", (unsigned)getuid());
    snprintf(target, sizeof target, "%s/dev.example.naive", domain);
    def_path(path, sizeof path, f, "dev.example.naive", LAUNCHD);
    assert_int_equal(fake(f, "launchctl", "bootout", target, NULL, NULL), 0);
    char *err = NULL;
    assert_int_equal(fake(f, "launchctl", "bootstrap", domain, path, &err), 5);
    assert_non_null(strstr(err, EIO_TEXT));
    free(err);
    /* the failure was the teardown: once it is over, the same works */
    end_teardowns(done);
    assert_int_equal(fake(f, "launchctl", "bootstrap", domain, path, NULL), 0);
}

/* The `launchctl print` polls of label between the bootout at index out
 * and the bootstrap at index in: one every 200 ms from the bootout until
 * the label is gone, never more often. Poll k starts no earlier than
 * k * 200 ms (less 1 ms of rounding) after the bootout returned, and the
 * log's time of a call is its end, so the last poll ends at least
 * (polls - 1) * 199 ms after the bootout's logged time; and polling stops
 * at the first print that finds the label gone, so there are at most
 * teardown_ms / 200 + 2. (No lower bound but one: on a loaded machine a
 * print can take longer than 200 ms, and the polls are fewer.) Returns the
 * count. */
static size_t assert_polled_every_200ms(const call_log *l, size_t out,
                                        size_t in, const char *label,
                                        int teardown_ms)
{
    char target[256];
    snprintf(target, sizeof target, "print gui/%u/%s", (unsigned)getuid(),
             label);
    size_t polls = 0;
    size_t last = out;
    for (size_t i = out + 1; i < in; i++)
        if (strcmp(l->v[i].tool, "launchctl") == 0 &&
            strcmp(l->v[i].argv, target) == 0) {
            polls++;
            last = i;
        }
    double span = l->v[last].t_ms - l->v[out].t_ms;
    if (polls < 1 || (double)(polls - 1) * 199.0 > span + 0.2 ||
        polls > (size_t)teardown_ms / 200 + 2)
        fail_msg("%s: %zu print polls in %.0f ms for a %d ms teardown", label,
                 polls, span, teardown_ms);
    return polls;
}

/* ---- teardown times from 0 to 3 s, in parallel
 * ------------------------------- */

static void test_teardown_sweep(void **state)
{
    fx *f = *state;
    static const struct {
        const char *label;
        int ms;
    } sweep[] = { { "sweep.t0", 0 },
                  { "sweep.t500", 500 },
                  { "sweep.t1500", 1500 },
                  { "sweep.t3000", 3000 } };
    enum { N = sizeof sweep / sizeof *sweep };
    fx_config(f, "\"teardown_ms_by_label\": {\"sweep.t0\": 0, "
                 "\"sweep.t500\": 500, \"sweep.t1500\": 1500, "
                 "\"sweep.t3000\": 3000}");
    job j[N];
    for (size_t i = 0; i < N; i++)
        job_start(&j[i], f, sweep[i].label, "v1");
    for (size_t i = 0; i < N; i++) {
        job_join(&j[i]);
        assert_int_equal(j[i].code, TK_OK);
        assert_int_equal(j[i].action, A_INSTALLED);
    }
    size_t before = log_size(f);
    for (size_t i = 0; i < N; i++) /* the upgrade: a new spec */
        job_start(&j[i], f, sweep[i].label, "v2");
    for (size_t i = 0; i < N; i++)
        job_join(&j[i]);
    call_log l;
    log_read(f, &l);
    for (size_t i = 0; i < N; i++) {
        if (j[i].code != TK_OK)
            fail_msg("%s: code %d %s", sweep[i].label, j[i].code, j[i].reason);
        assert_int_equal(j[i].action, A_UPDATED);
        assert_int_equal(j[i].attempts, 1); /* observed, so no retry */
        size_t out = find(&l, before, "bootout", sweep[i].label);
        char plist[64];
        snprintf(plist, sizeof plist, "%s.plist", sweep[i].label);
        size_t in = find(&l, before, "bootstrap", plist);
        assert_true(out < in);
        assert_int_equal(l.v[in].exit, 0);
        /* it waited out the teardown before the bootstrap: the model
         * logged when the label leaves, and the bootstrap came after, on
         * the same clock (its exit 0 and the single attempt already say
         * so: the model refuses a bootstrap before that) */
        assert_true(l.v[out].teardown_end_ms >= 0);
        assert_true(l.v[out].teardown_end_ms - l.v[out].teardown_start_ms >
                    sweep[i].ms - 0.5); /* the log rounds to 0.1 ms */
        assert_true(l.v[in].t_ms >= l.v[out].teardown_end_ms);
        assert_polled_every_200ms(&l, out, in, sweep[i].label, sweep[i].ms);
        size_t rounds;
        assert_true(label_rounds(&l, before, sweep[i].label, &rounds));
        assert_int_equal(rounds, 1);
    }
    log_free(&l);
}

static int setup_gone_wait_1s(void **state)
{
    fx_opts o = { .gone_wait_ms = 1000 };
    return fx_setup_with(state, &o);
}

/* launchd takes longer to tear the old job down than Register waits (the
 * bound is 10 s; 1 s here): UNAVAILABLE, TEARDOWN_TIMEOUT, and nothing
 * after the bootout — no file replaced, no enable, no bootstrap. The
 * teardown is held until the test ends it, after the Register: every print
 * finds the label, however slowly each runs. */
static void test_teardown_timeout(void **state)
{
    fx *f = *state;
    spec v1, v2;
    spec_v(&v1, "dev.example.slow", "v1");
    spec_v(&v2, "dev.example.slow", "v2");
    register_ok(f, &v1, LAUNCHD, A_INSTALLED);
    char path[PATH_MAX];
    def_path(path, sizeof path, f, "dev.example.slow", LAUNCHD);
    char *old = read_file(path);
    assert_non_null(old);
    char done[PATH_MAX];
    hold_teardowns(f, done, sizeof done);
    size_t before = log_size(f);
    long long t0 = ts_now_ms();
    tk_status st = register_fails(f, &v2, LAUNCHD, TK_CODE_UNAVAILABLE);
    long long took = ts_now_ms() - t0;
    assert_string_equal(st.reason, "TEARDOWN_TIMEOUT");
    char want[256];
    snprintf(want, sizeof want,
             "gui/%u/dev.example.slow is still in the domain 1000 ms after "
             "launchctl bootout",
             (unsigned)getuid());
    if (strstr(st.message, want) == NULL)
        fail_msg("message: %s", st.message);
    assert_true(st.retry_after_ms > 0);
    tk_status_clear(&st);
    /* it gave up only once the bound had passed (a lower bound: load only
     * makes it longer; how much longer is no property of Register's) */
    assert_true(took >= 1000);
    char *now = read_file(path); /* the old definition, untouched */
    assert_non_null(now);
    assert_string_equal(now, old);
    free(now);
    free(old);
    call_log l;
    log_read(f, &l);
    assert_int_equal(count_mutating(&l, before), 1); /* the bootout alone */
    assert_int_equal(count_calls(&l, before, "launchctl", "enable", NULL), 0);
    assert_int_equal(count_calls(&l, before, "launchctl", "bootstrap", NULL),
                     0);
    size_t out = find(&l, before, "bootout", NULL);
    assert_true(out != (size_t)-1);
    /* it polled until the bound (6 prints when each takes < 200 ms, one
     * when a print on a loaded machine outlasts the bound), and every
     * print found the label still there */
    assert_polled_every_200ms(&l, out, l.n, "dev.example.slow", 1000);
    for (size_t i = out + 1; i < l.n; i++)
        if (strcmp(l.v[i].verb, "print") == 0 &&
            strstr(l.v[i].argv, "/dev.example.slow") != NULL)
            assert_int_equal(l.v[i].exit, 0);
    log_free(&l);
    end_teardowns(done);
    /* no temporary file left next to it */
    char *argv[] = { "/bin/ls", "-A", f->agents, NULL };
    char *listing = NULL;
    assert_int_equal(run((const char *const *)argv, NULL, &listing, NULL), 0);
    assert_string_equal(listing, "dev.example.slow.plist\n");
    free(listing);
}

/* The label has left print, launchd still refuses for a while: the bounded
 * retry covers that gap, with a linear backoff. The model counts the gap
 * in attempts (settle_bootstraps: the first two bootstraps after the label
 * left fail), so that the count does not depend on how fast each launchctl
 * starts. */
static void test_retry_covers_the_gap_after_print(void **state)
{
    fx *f = *state;
    spec s;
    spec_v(&s, "dev.example.gap", "v1");
    register_ok(f, &s, LAUNCHD, A_INSTALLED);
    fx_config(f, "\"teardown_ms\": 300, \"settle_bootstraps\": 2");
    size_t before = log_size(f);
    spec_v(&s, "dev.example.gap", "v2");
    unsigned attempts = register_ok(f, &s, LAUNCHD, A_UPDATED);
    assert_int_equal(attempts, 3);
    call_log l;
    log_read(f, &l);
    size_t k = 0;
    double prev = 0;
    for (size_t i = before; i < l.n; i++) {
        if (strcmp(l.v[i].verb, "bootstrap") != 0)
            continue;
        k++;
        if (k < attempts)
            assert_non_null(strstr(l.v[i].err, EIO_TEXT));
        else
            assert_int_equal(l.v[i].exit, 0);
        if (k > 1) /* slept (k-1) * 300 ms before this attempt */
            assert_true(l.v[i].t_ms - prev >= (double)(k - 1) * 300.0);
        prev = l.v[i].t_ms;
    }
    assert_int_equal(k, attempts);
    log_free(&l);
}

/* A plist launchd refuses with the same Input/output error (the model's
 * tests show a malformed one does): bounded — 6 attempts — and the error
 * carries launchctl's output. Any other error fails at once. */
static void test_refused_plist_fails_after_bounded_attempts(void **state)
{
    fx *f = *state;
    fx_config(f, "\"refuse\": {\"dev.example.broken\": 5, "
                 "\"dev.example.other\": 125}");
    spec s;
    spec_v(&s, "dev.example.broken", "v1");
    long long t0 = ts_now_ms();
    tk_status st = register_fails(f, &s, LAUNCHD, TK_CODE_FAILED_PRECONDITION);
    long long took = ts_now_ms() - t0;
    assert_string_equal(st.reason, "BOOTSTRAP_FAILED");
    assert_non_null(strstr(st.message, "Input/output error"));
    assert_non_null(strstr(st.message, "attempt 6 of at most 6"));
    assert_non_null(st.stderr_excerpt);
    assert_non_null(strstr((const char *)st.stderr_excerpt, EIO_TEXT));
    tk_status_clear(&st);
    call_log l;
    log_read(f, &l);
    assert_int_equal(count_calls(&l, 0, "launchctl", "bootstrap", NULL), 6);
    /* the backoff between them: 300 + 600 + 900 + 1200 + 1500 ms (a lower
     * bound). That it then stopped by its own bound, not at the write's
     * own 120 s timeout, is said by the six bootstraps, the message and
     * the code (that timeout would be DEADLINE_EXCEEDED), not by a time */
    assert_true(took >= 4500);
    size_t before = l.n;
    log_free(&l);

    spec_v(&s, "dev.example.other", "v1");
    st = register_fails(f, &s, LAUNCHD, TK_CODE_FAILED_PRECONDITION);
    assert_string_equal(st.reason, "BOOTSTRAP_FAILED");
    assert_non_null(strstr(st.message, "not retried"));
    /* launchctl's own words, in the message and the excerpt */
    static const char refused[] =
        "Bootstrap failed: 125: Domain does not support specified action";
    assert_non_null(strstr(st.message, refused));
    assert_non_null(st.stderr_excerpt);
    assert_non_null(strstr((const char *)st.stderr_excerpt, refused));
    tk_status_clear(&st);
    log_read(f, &l);
    assert_int_equal(count_calls(&l, before, "launchctl", "bootstrap", NULL),
                     1);
    log_free(&l);
}

/* plutil -lint, where plutil exists, judges the new file before anything is
 * taken down: on an update it runs before the bootout, and when it refuses
 * nothing changes. */
static void test_plutil_lints_first(void **state)
{
    fx *f = *state;
    spec s;
    spec_v(&s, "dev.example.lint", "v1");
    register_ok(f, &s, LAUNCHD, A_INSTALLED);
    size_t before = log_size(f);
    spec_v(&s, "dev.example.lint", "v2");
    register_ok(f, &s, LAUNCHD, A_UPDATED);
    call_log l;
    log_read(f, &l);
    size_t lint = (size_t)-1;
    for (size_t i = before; i < l.n; i++)
        if (strcmp(l.v[i].tool, "plutil") == 0)
            lint = i;
    assert_true(lint != (size_t)-1);
    assert_int_equal(l.v[lint].exit, 0);
    assert_non_null(strstr(l.v[lint].argv, "-lint"));
    assert_true(lint < find(&l, before, "bootout", NULL));
    assert_true(find(&l, before, "bootout", NULL) <
                find(&l, before, "bootstrap", NULL));
    before = l.n;
    log_free(&l);

    char path[PATH_MAX];
    def_path(path, sizeof path, f, "dev.example.lint", LAUNCHD);
    char *old = read_file(path);
    assert_non_null(old);
    fx_config(f, "\"lint_refuse\": true");
    spec_v(&s, "dev.example.lint", "v3");
    tk_status st = register_fails(f, &s, LAUNCHD, TK_CODE_FAILED_PRECONDITION);
    assert_string_equal(st.reason, "LINT_FAILED");
    assert_non_null(strstr(st.message, "Property List error"));
    assert_non_null(st.stderr_excerpt);
    assert_non_null(
        strstr((const char *)st.stderr_excerpt, "Property List error"));
    tk_status_clear(&st);
    log_read(f, &l);
    assert_int_equal(count_calls(&l, before, "plutil", "-lint", NULL), 1);
    assert_int_equal(count_mutating(&l, before), 0);
    log_free(&l);
    char *now = read_file(path); /* v2 stays, byte for byte */
    assert_non_null(now);
    assert_string_equal(now, old);
    free(now);
    free(old);
}

/* ---- a cancel does not stop a Register
 * --------------------------------------- */

/* The Cancel lands while Register waits out the teardown: the teardown
 * lasts until the Cancel has answered. */
static void test_cancel_does_not_stop_register(void **state)
{
    fx *f = *state;
    spec s;
    spec_v(&s, "dev.example.cancel", "v1");
    register_ok(f, &s, LAUNCHD, A_INSTALLED);
    char done[PATH_MAX];
    hold_teardowns(f, done, sizeof done);
    size_t before = log_size(f);
    job j;
    memset(&j, 0, sizeof j);
    assert_int_equal(tk_cancel_new(&j.cancel), 0);
    j.f = f;
    spec_v(&j.s, "dev.example.cancel", "v2");
    assert_int_equal(pthread_create(&j.thread, NULL, job_main, &j), 0);
    wait_for_call(f, before, "launchctl", "bootout"); /* mid-way */
    int outcome = -1;
    assert_int_equal(tk_cancel_fire(j.cancel, &outcome), 0);
    assert_int_equal(outcome, TK_CANCEL_WRITE_CONTINUES);
    end_teardowns(done);
    job_join(&j);
    assert_int_equal(j.code, TK_OK);
    assert_int_equal(j.action, A_UPDATED);
    assert_true(j.write_completed);
    assert_int_equal(j.cause, TK_CAUSE_NONE);
    call_log l;
    log_read(f, &l);
    size_t in = find(&l, find(&l, before, "bootout", NULL), "bootstrap", NULL);
    assert_true(in != (size_t)-1);
    assert_int_equal(l.v[in].exit, 0);
    log_free(&l);
    tk_cancel_free(j.cancel);
}

/* ---- one label at a time; different labels in parallel
 * ------------------------ */

static void test_same_label_never_interleaves(void **state)
{
    fx *f = *state;
    spec s;
    spec_v(&s, "dev.example.one", "v0");
    register_ok(f, &s, LAUNCHD, A_INSTALLED);
    fx_config(f, "\"teardown_ms\": 300");
    size_t before = log_size(f);
    static const char *const words[] = { "v1", "v2", "v3", "v4" };
    job j[4];
    for (size_t i = 0; i < 4; i++)
        job_start(&j[i], f, "dev.example.one", words[i]);
    for (size_t i = 0; i < 4; i++) {
        job_join(&j[i]);
        assert_int_equal(j[i].code, TK_OK);
        assert_int_equal(j[i].action, A_UPDATED);
    }
    call_log l;
    log_read(f, &l);
    size_t rounds;
    assert_true(label_rounds(&l, before, "dev.example.one", &rounds));
    assert_int_equal(rounds, 4);
    assert_int_equal(count_calls(&l, before, "launchctl", "bootout", NULL), 4);
    log_free(&l);
}

/* Control of the check above: an interleaved sequence is found. */
static void test_interleaving_is_detected(void **state)
{
    (void)state;
    const char *const serial[] = { "bootout",   "enable",  "bootstrap",
                                   "bootstrap", "bootout", "enable",
                                   "bootstrap" };
    const bool serial_ok[] = { 1, 1, 0, 1, 1, 1, 1 };
    size_t rounds;
    assert_true(whole_rounds(serial, serial_ok, 7, &rounds));
    assert_int_equal(rounds, 2);
    const char *const mixed[] = { "bootout",   "bootout", "enable",
                                  "bootstrap", "enable",  "bootstrap" };
    const bool mixed_ok[] = { 1, 1, 1, 1, 1, 1 };
    assert_false(whole_rounds(mixed, mixed_ok, 6, &rounds));
    const char *const early[] = { "bootout", "enable", "bootout", "bootstrap" };
    const bool early_ok[] = { 1, 1, 1, 1 };
    assert_false(whole_rounds(early, early_ok, 4, &rounds));
}

/* Each label's teardown lasts until both bootouts have happened: a
 * Register that waited for the other label's would not get its bootout in
 * until the other had given up (TEARDOWN_TIMEOUT). */
static void test_different_labels_in_parallel(void **state)
{
    fx *f = *state;
    spec s;
    spec_v(&s, "par.a", "v1");
    register_ok(f, &s, LAUNCHD, A_INSTALLED);
    spec_v(&s, "par.b", "v1");
    register_ok(f, &s, LAUNCHD, A_INSTALLED);
    char done[PATH_MAX];
    hold_teardowns(f, done, sizeof done);
    size_t before = log_size(f);
    job a, b;
    job_start(&a, f, "par.a", "v2");
    job_start(&b, f, "par.b", "v2");
    wait_for_calls(f, before, "launchctl", "bootout", 2);
    end_teardowns(done);
    job_join(&a);
    job_join(&b);
    if (a.code != TK_OK || b.code != TK_OK)
        fail_msg("a: %d %s, b: %d %s", a.code, a.reason, b.code, b.reason);
    call_log l;
    log_read(f, &l);
    /* each took its label down before the other had loaded its own: the two
     * teardowns overlapped */
    size_t out_a = find(&l, before, "bootout", "par.a");
    size_t out_b = find(&l, before, "bootout", "par.b");
    size_t in_a = find(&l, before, "bootstrap", "par.a.plist");
    size_t in_b = find(&l, before, "bootstrap", "par.b.plist");
    assert_true(out_a < in_b && out_b < in_a);
    log_free(&l);
}

/* ---- domains, status, unregister, repair
 * ----------------------------------------- */

static void test_user_domain_without_gui(void **state)
{
    fx *f = *state;
    fx_config(f, "\"gui\": false");
    spec s;
    spec_v(&s, "dev.example.headless", "v1");
    register_ok(f, &s, LAUNCHD, A_INSTALLED);
    char domain[64];
    snprintf(domain, sizeof domain, "bootstrap user/%u ", (unsigned)getuid());
    call_log l;
    log_read(f, &l);
    assert_int_equal(count_calls(&l, 0, "launchctl", "bootstrap", domain), 1);
    log_free(&l);
}

static void test_status_and_unregister(void **state)
{
    fx *f = *state;
    Tk__V1__ServiceStatusReply *r =
        status_of(f, "dev.example.st", NULL, LAUNCHD);
    assert_false(r->installed);
    assert_false(r->loaded);
    protobuf_c_message_free_unpacked(&r->base, NULL);

    spec s;
    spec_v(&s, "dev.example.st", "v1");
    register_ok(f, &s, LAUNCHD, A_INSTALLED);
    r = status_of(f, "", &s, LAUNCHD);
    assert_true(r->installed && r->up_to_date && r->loaded);
    assert_true(r->pid > 0);
    assert_null(r->last_exit); /* "(never exited)" */
    protobuf_c_message_free_unpacked(&r->base, NULL);
    /* its process ended: by exit 3, then by SIGKILL */
    fx_config(f, "\"exited\": {\"dev.example.st\": {\"code\": 3}}");
    r = status_of(f, "dev.example.st", NULL, LAUNCHD);
    assert_true(r->loaded);
    assert_int_equal(r->pid, 0);
    assert_non_null(r->last_exit);
    assert_int_equal(r->last_exit->code, 3);
    assert_int_equal(r->last_exit->signal, 0);
    protobuf_c_message_free_unpacked(&r->base, NULL);
    fx_config(f, "\"exited\": {\"dev.example.st\": {\"signal\": 9}}");
    r = status_of(f, "dev.example.st", NULL, LAUNCHD);
    assert_int_equal(r->pid, 0);
    assert_non_null(r->last_exit);
    assert_int_equal(r->last_exit->signal, 9);
    assert_int_equal(r->last_exit->code, 0);
    protobuf_c_message_free_unpacked(&r->base, NULL);
    fx_config(f, "");
    spec other;
    spec_v(&other, "dev.example.st", "v2");
    r = status_of(f, "dev.example.st", &other, LAUNCHD);
    assert_true(r->installed && r->loaded);
    assert_false(r->up_to_date); /* v2 is not what is installed */
    protobuf_c_message_free_unpacked(&r->base, NULL);

    for (int round = 0; round < 2; round++) {
        Tk__V1__ServiceUnregisterReply *u =
            unregister_ok(f, "dev.example.st", LAUNCHD);
        assert_int_equal(u->removed, round == 0);
        assert_int_equal(u->unloaded, round == 0);
        protobuf_c_message_free_unpacked(&u->base, NULL);
    }
    r = status_of(f, "dev.example.st", NULL, LAUNCHD);
    assert_false(r->installed || r->loaded);
    protobuf_c_message_free_unpacked(&r->base, NULL);
}

/* Installed as rendered but not loaded (someone booted it out, or a former
 * bootstrap failed): the next Register loads it. */
static void test_installed_but_not_loaded_is_loaded(void **state)
{
    fx *f = *state;
    spec s;
    spec_v(&s, "dev.example.lost", "v1");
    register_ok(f, &s, LAUNCHD, A_INSTALLED);
    char target[256];
    snprintf(target, sizeof target, "gui/%u/dev.example.lost",
             (unsigned)getuid());
    assert_int_equal(fake(f, "launchctl", "bootout", target, NULL, NULL), 0);
    Tk__V1__ServiceRegisterReply *rep = NULL;
    tk_status st;
    assert_int_equal(call_register(f, &s, LAUNCHD, &rep, &st, NULL), TK_OK);
    assert_int_equal(rep->action, A_UPDATED);
    assert_int_equal(rep->n_warnings, 1);
    assert_non_null(strstr(rep->warnings[0], "not loaded"));
    protobuf_c_message_free_unpacked(&rep->base, NULL);
    tk_status_clear(&st);
    assert_int_equal(fake(f, "launchctl", "print", target, NULL, NULL), 0);
}

/* ---- against the real launchctl (macOS, TK_TEST_LAUNCHCTL=real) ---------
 */

static int setup_real(void **state)
{
    if (!fx_real_launchctl()) {
        *state = NULL;
        return 0;
    }
    fx_opts o = { .real_launchctl = true };
    return fx_setup_with(state, &o);
}

static int teardown_real(void **state)
{
    return *state != NULL ? fx_teardown(state) : 0;
}

static fx *real_fx(void **state)
{
    if (*state == NULL)
        skip(); /* cmocka prints [  SKIPPED ]; the group's name says why */
    return *state;
}

static int sweep_real(void **state)
{
    (void)state;
    if (fx_real_launchctl())
        fx_sweep_stale_labels();
    return 0;
}

/* A job that runs until it is stopped; its version is in its text. */
static void spec_real(spec *s, char *buf, size_t len, const char *label,
                      const char *version)
{
    snprintf(buf, len, "exec /bin/sleep 86400 # %s", version);
    spec_v(s, label, buf);
}

/* The domain Register uses: gui/<uid> where there is one, else user/<uid>. */
static void real_target(fx *f, const char *label, char *out, size_t len)
{
    char gui[64];
    snprintf(gui, sizeof gui, "gui/%u", (unsigned)getuid());
    bool has_gui = fake(f, "launchctl", "print", gui, NULL, NULL) == 0;
    snprintf(out, len, "%s/%u/%s", has_gui ? "gui" : "user", (unsigned)getuid(),
             label);
}

/* Status until launchd has started the job (RunAtLoad): its pid. */
static int real_pid(fx *f, const char *label, spec *s)
{
    long long until = ts_now_ms() + 10000;
    for (;;) {
        Tk__V1__ServiceStatusReply *r = status_of(f, label, s, LAUNCHD);
        assert_true(r->installed && r->loaded);
        assert_true(s == NULL || r->up_to_date);
        int pid = r->pid;
        protobuf_c_message_free_unpacked(&r->base, NULL);
        if (pid > 0)
            return pid;
        if (ts_now_ms() >= until)
            fail_msg("%s: loaded, no pid after 10 s", label);
        struct timespec ts = { 0, 100000000 };
        nanosleep(&ts, NULL);
    }
}

static void test_real_register_unchanged_unregister(void **state)
{
    fx *f = real_fx(state);
    char label[128], target[256], word[64];
    fx_label(label, sizeof label, "basic");
    real_target(f, label, target, sizeof target);
    spec s;
    spec_real(&s, word, sizeof word, label, "v1");
    assert_int_equal(register_ok(f, &s, LAUNCHD, A_INSTALLED), 1);
    assert_installed(f, &s, LAUNCHD);
    char path[PATH_MAX];
    def_path(path, sizeof path, f, label, LAUNCHD);
    struct stat st1;
    assert_int_equal(stat(path, &st1), 0);
    assert_int_equal(st1.st_mode & 07777, 0644);
    assert_int_equal(fake(f, "launchctl", "print", target, NULL, NULL), 0);
    assert_true(real_pid(f, "", &s) > 0);

    size_t before = log_size(f);
    assert_int_equal(register_ok(f, &s, LAUNCHD, A_UNCHANGED), 0);
    call_log l;
    log_read(f, &l);
    assert_true(l.n > before);                       /* it looked ... */
    assert_int_equal(count_mutating(&l, before), 0); /* ... and only looked */
    log_free(&l);
    struct stat st2;
    assert_int_equal(stat(path, &st2), 0);
    assert_int_equal(st1.st_ino, st2.st_ino);

    for (int round = 0; round < 2; round++) {
        Tk__V1__ServiceUnregisterReply *u = unregister_ok(f, label, LAUNCHD);
        assert_int_equal(u->removed, round == 0);
        assert_int_equal(u->unloaded, round == 0);
        protobuf_c_message_free_unpacked(&u->base, NULL);
    }
    Tk__V1__ServiceStatusReply *r = status_of(f, label, NULL, LAUNCHD);
    assert_false(r->installed || r->loaded);
    protobuf_c_message_free_unpacked(&r->base, NULL);
    assert_int_not_equal(fake(f, "launchctl", "print", target, NULL, NULL), 0);
}

/* A changed spec: plutil -lint, bootout, print until the label has gone,
 * enable, bootstrap — the race with launchd's teardown met for real. Any
 * failed bootstrap before the last is the Input/output error. */
static void test_real_changed_spec_one_round(void **state)
{
    fx *f = real_fx(state);
    char label[128], target[256], w1[64], w2[64];
    fx_label(label, sizeof label, "update");
    real_target(f, label, target, sizeof target);
    spec s;
    spec_real(&s, w1, sizeof w1, label, "v1");
    register_ok(f, &s, LAUNCHD, A_INSTALLED);
    int pid1 = real_pid(f, label, &s);
    size_t before = log_size(f);
    spec_real(&s, w2, sizeof w2, label, "v2");
    unsigned attempts = register_ok(f, &s, LAUNCHD, A_UPDATED);
    assert_true(attempts >= 1);
    assert_installed(f, &s, LAUNCHD);
    call_log l;
    log_read(f, &l);
    assert_int_equal(count_calls(&l, before, "launchctl", "bootout", NULL), 1);
    assert_int_equal(count_calls(&l, before, "launchctl", "enable", NULL), 1);
    assert_int_equal(count_calls(&l, before, "launchctl", "bootstrap", NULL),
                     attempts);
    size_t lint = (size_t)-1, out = (size_t)-1, gone = (size_t)-1,
           en = (size_t)-1, in = (size_t)-1;
    char print[300];
    snprintf(print, sizeof print, "print %s", target);
    for (size_t i = before; i < l.n; i++) {
        const call_rec *c = &l.v[i];
        if (strcmp(c->tool, "plutil") == 0 && lint == (size_t)-1)
            lint = i;
        else if (strcmp(c->verb, "bootout") == 0)
            out = i;
        else if (out != (size_t)-1 && gone == (size_t)-1 &&
                 strcmp(c->argv, print) == 0 && c->exit != 0)
            gone = i;
        else if (strcmp(c->verb, "enable") == 0)
            en = i;
        else if (strcmp(c->verb, "bootstrap") == 0) {
            if (c->exit != 0)
                assert_non_null(strstr(c->err, "Input/output error"));
            in = i;
        }
    }
    if (!(lint < out && out < gone && gone < en && en < in))
        fail_msg("order: lint %zu, bootout %zu, gone %zu, enable %zu, "
                 "bootstrap %zu",
                 lint, out, gone, en, in);
    assert_int_equal(l.v[in].exit, 0);
    log_free(&l);
    /* the new job runs: a new process */
    int pid2 = real_pid(f, label, &s);
    assert_int_not_equal(pid1, pid2);
}

/* Four Registers of one label at once, each a new spec: one after the
 * other, each a whole round against launchd itself. */
static void test_real_same_label_never_interleaves(void **state)
{
    fx *f = real_fx(state);
    char label[128], w0[64];
    fx_label(label, sizeof label, "one");
    spec s;
    spec_real(&s, w0, sizeof w0, label, "v0");
    register_ok(f, &s, LAUNCHD, A_INSTALLED);
    size_t before = log_size(f);
    static const char *const words[] = { "exec /bin/sleep 86400 # v1",
                                         "exec /bin/sleep 86400 # v2",
                                         "exec /bin/sleep 86400 # v3",
                                         "exec /bin/sleep 86400 # v4" };
    job j[4];
    for (size_t i = 0; i < 4; i++)
        job_start(&j[i], f, label, words[i]);
    for (size_t i = 0; i < 4; i++)
        job_join(&j[i]);
    for (size_t i = 0; i < 4; i++)
        if (j[i].code != TK_OK || j[i].action != A_UPDATED)
            fail_msg("Register %zu: code %d %s, action %d", i, j[i].code,
                     j[i].reason, j[i].action);
    call_log l;
    log_read(f, &l);
    size_t rounds;
    assert_true(label_rounds(&l, before, label, &rounds));
    assert_int_equal(rounds, 4);
    log_free(&l);
}

/* Booted out behind tkd's back: the next Register loads it again. */
static void test_real_installed_but_not_loaded_is_loaded(void **state)
{
    fx *f = real_fx(state);
    char label[128], target[256], word[64];
    fx_label(label, sizeof label, "lost");
    real_target(f, label, target, sizeof target);
    spec s;
    spec_real(&s, word, sizeof word, label, "v1");
    register_ok(f, &s, LAUNCHD, A_INSTALLED);
    assert_int_equal(fake(f, "launchctl", "bootout", target, NULL, NULL), 0);
    /* launchd tears it down after bootout has returned */
    long long until = ts_now_ms() + 10000;
    while (fake(f, "launchctl", "print", target, NULL, NULL) == 0) {
        if (ts_now_ms() >= until)
            fail_msg("%s still loaded 10 s after bootout", target);
        struct timespec ts = { 0, 100000000 };
        nanosleep(&ts, NULL);
    }
    Tk__V1__ServiceRegisterReply *rep = NULL;
    tk_status st;
    int code = call_register(f, &s, LAUNCHD, &rep, &st, NULL);
    if (code != TK_OK)
        fail_msg("Register: %s %s", st.reason, st.message);
    assert_int_equal(rep->action, A_UPDATED);
    assert_int_equal(rep->n_warnings, 1);
    assert_non_null(strstr(rep->warnings[0], "not loaded"));
    protobuf_c_message_free_unpacked(&rep->base, NULL);
    tk_status_clear(&st);
    assert_int_equal(fake(f, "launchctl", "print", target, NULL, NULL), 0);
}

#define T(name) cmocka_unit_test_setup_teardown(name, fx_setup, fx_teardown)
#define REAL(name)                                                             \
    cmocka_unit_test_setup_teardown(name, setup_real, teardown_real)

int main(void)
{
    proc_init();
    const struct CMUnitTest tests[] = {
        T(test_register_then_unchanged),
        T(test_changed_spec_one_round),
        T(test_naive_sequence_fails),
        T(test_teardown_sweep),
        cmocka_unit_test_setup_teardown(test_teardown_timeout,
                                        setup_gone_wait_1s, fx_teardown),
        T(test_retry_covers_the_gap_after_print),
        T(test_refused_plist_fails_after_bounded_attempts),
        cmocka_unit_test_setup_teardown(test_plutil_lints_first, setup_plutil,
                                        fx_teardown),
        T(test_cancel_does_not_stop_register),
        T(test_same_label_never_interleaves),
        cmocka_unit_test(test_interleaving_is_detected),
        T(test_different_labels_in_parallel),
        T(test_user_domain_without_gui),
        T(test_status_and_unregister),
        T(test_installed_but_not_loaded_is_loaded),
    };
    const struct CMUnitTest real[] = {
        REAL(test_real_register_unchanged_unregister),
        REAL(test_real_changed_spec_one_round),
        REAL(test_real_same_label_never_interleaves),
        REAL(test_real_installed_but_not_loaded_is_loaded),
    };
    int failed =
        cmocka_run_group_tests_name("services-launchd", tests, NULL, NULL);
    failed += cmocka_run_group_tests_name(
        fx_real_launchctl() ? "services-launchd-real (/bin/launchctl)"
                            : "services-launchd-real: skipped, needs macOS and "
                              "TK_TEST_LAUNCHCTL=real",
        real, sweep_real, NULL);
    return failed;
}
