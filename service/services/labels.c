/* SPDX-License-Identifier: MIT */
/* The per-label lock table: operations that change one label run one after
 * the other (two interleaved bootout/bootstrap sequences would fail each
 * other), operations on different labels in parallel. An entry lives while
 * someone holds or waits for its label. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "services_int.h"

struct services_lock_entry {
    services_lock_entry *next;
    unsigned users; /* holder and waiters */
    bool held;
    char label[SERVICES_LABEL_MAX + 1];
};

void services__locks_init(services *r)
{
    pthread_mutex_init(&r->locks_mu, NULL);
    tkc_cond_init(&r->locks_cv);
    r->locks = NULL;
}

void services__locks_fini(services *r)
{
    while (r->locks != NULL) {
        services_lock_entry *next = r->locks->next;
        free(r->locks);
        r->locks = next;
    }
    pthread_cond_destroy(&r->locks_cv);
    pthread_mutex_destroy(&r->locks_mu);
}

/* Under locks_mu. */
static services_lock_entry *entry_for(services *r, const char *label)
{
    for (services_lock_entry *x = r->locks; x != NULL; x = x->next)
        if (strcmp(x->label, label) == 0)
            return x;
    services_lock_entry *x = calloc(1, sizeof *x);
    if (x == NULL)
        return NULL;
    strncpy(x->label, label, SERVICES_LABEL_MAX);
    x->next = r->locks;
    r->locks = x;
    return x;
}

/* Under locks_mu: drops an entry nobody holds or waits for. */
static void release_entry(services *r, services_lock_entry *x)
{
    if (--x->users != 0)
        return;
    for (services_lock_entry **p = &r->locks; *p != NULL; p = &(*p)->next) {
        if (*p == x) {
            *p = x->next;
            free(x);
            return;
        }
    }
}

int services__label_lock(services *r, const char *label, int64_t deadline_ns,
                         services_error *e)
{
    pthread_mutex_lock(&r->locks_mu);
    services_lock_entry *x = entry_for(r, label);
    if (x == NULL) {
        pthread_mutex_unlock(&r->locks_mu);
        return services__fail(e, RPC_RESOURCE_EXHAUSTED, "NO_MEMORY",
                              "out of memory");
    }
    x->users++;
    int rc = 0;
    while (x->held && rc != ETIMEDOUT)
        rc = tkc_cond_wait_until(&r->locks_cv, &r->locks_mu, deadline_ns);
    bool got = !x->held;
    if (got)
        x->held = true;
    else
        release_entry(r, x);
    pthread_mutex_unlock(&r->locks_mu);
    if (!got)
        return services__stop(e, "another operation on this label finished");
    return 0;
}

void services__label_unlock(services *r, const char *label)
{
    pthread_mutex_lock(&r->locks_mu);
    for (services_lock_entry *x = r->locks; x != NULL; x = x->next) {
        if (strcmp(x->label, label) == 0) {
            x->held = false;
            release_entry(r, x);
            break;
        }
    }
    pthread_cond_broadcast(&r->locks_cv);
    pthread_mutex_unlock(&r->locks_mu);
}
