/* The per-label lock table: operations that change one label run one after
 * the other (two interleaved bootout/bootstrap sequences would fail each
 * other), operations on different labels in parallel. An entry lives while
 * someone holds or waits for its label. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "registry_int.h"

struct reg_lock_entry {
    reg_lock_entry *next;
    unsigned users; /* holder and waiters */
    bool held;
    char label[REG_LABEL_MAX + 1];
};

void reg_locks_init(registry *r)
{
    pthread_mutex_init(&r->locks_mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&r->locks_cv, &ca);
    pthread_condattr_destroy(&ca);
    r->locks = NULL;
}

void reg_locks_destroy(registry *r)
{
    while (r->locks != NULL) {
        reg_lock_entry *next = r->locks->next;
        free(r->locks);
        r->locks = next;
    }
    pthread_cond_destroy(&r->locks_cv);
    pthread_mutex_destroy(&r->locks_mu);
}

/* Under locks_mu. */
static reg_lock_entry *entry_for(registry *r, const char *label)
{
    for (reg_lock_entry *x = r->locks; x != NULL; x = x->next)
        if (strcmp(x->label, label) == 0)
            return x;
    reg_lock_entry *x = calloc(1, sizeof *x);
    if (x == NULL)
        return NULL;
    strncpy(x->label, label, REG_LABEL_MAX);
    x->next = r->locks;
    r->locks = x;
    return x;
}

/* Under locks_mu: drops an entry nobody holds or waits for. */
static void release_entry(registry *r, reg_lock_entry *x)
{
    if (--x->users != 0)
        return;
    for (reg_lock_entry **p = &r->locks; *p != NULL; p = &(*p)->next) {
        if (*p == x) {
            *p = x->next;
            free(x);
            return;
        }
    }
}

int reg_label_lock(registry *r, const char *label, int64_t deadline_ns,
                   reg_error *e)
{
    struct timespec until = { .tv_sec = (time_t)(deadline_ns / 1000000000),
                              .tv_nsec = (long)(deadline_ns % 1000000000) };
    pthread_mutex_lock(&r->locks_mu);
    reg_lock_entry *x = entry_for(r, label);
    if (x == NULL) {
        pthread_mutex_unlock(&r->locks_mu);
        return reg_fail(e, RPC_RESOURCE_EXHAUSTED, "NO_MEMORY",
                        "out of memory");
    }
    x->users++;
    int rc = 0;
    while (x->held && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&r->locks_cv, &r->locks_mu, &until);
    bool got = !x->held;
    if (got)
        x->held = true;
    else
        release_entry(r, x);
    pthread_mutex_unlock(&r->locks_mu);
    if (!got)
        return reg_stop(e, "another operation on this label finished");
    return 0;
}

void reg_label_unlock(registry *r, const char *label)
{
    pthread_mutex_lock(&r->locks_mu);
    for (reg_lock_entry *x = r->locks; x != NULL; x = x->next) {
        if (strcmp(x->label, label) == 0) {
            x->held = false;
            release_entry(r, x);
            break;
        }
    }
    pthread_cond_broadcast(&r->locks_cv);
    pthread_mutex_unlock(&r->locks_mu);
}
