/* SPDX-License-Identifier: MIT */
/* Names as people type them: "tk.v1.Control/Ping", grpcurl's
 * "tk.v1.Control.Ping", "Control/Ping", "ping", matched against full names
 * (methods, services, messages) without case, '/' and '.' alike; what
 * matches nothing gets the closest name. */
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <tk/client.h>

#include "common/common.h"
#include "tkcall.h"
#include "tkcall_int.h"

/* Longer names are never typos of each other worth suggesting. */
#define NAME_MAX_LEN 256

static char fold(char c)
{
    if (c == '/')
        return '.';
    return (char)tolower((unsigned char)c);
}

/* typed names the end of full, on a boundary: "git/status" of
 * "tk.v1.Git/Status", not "tatus". */
static bool matches(const char *typed, const char *full)
{
    size_t nt = strlen(typed), nf = strlen(full);
    if (nt == 0 || nt > nf)
        return false;
    const char *tail = full + nf - nt;
    if (tail != full && tail[-1] != '.' && tail[-1] != '/')
        return false;
    for (size_t i = 0; i < nt; i++)
        if (fold(tail[i]) != fold(typed[i]))
            return false;
    return true;
}

static size_t count_parts(const char *s)
{
    size_t n = 1;
    for (; *s != '\0'; s++)
        n += *s == '.' || *s == '/';
    return n;
}

/* The last parts of full, as many as typed has ("Git/Status" for
 * "git/stauts"): what a typo is measured against. */
static const char *tail_parts(const char *full, size_t parts)
{
    const char *p = full + strlen(full);
    while (p > full) {
        if ((p[-1] == '.' || p[-1] == '/') && --parts == 0)
            return p;
        p--;
    }
    return full;
}

/* Optimal string alignment distance without case, '/' and '.' alike: a
 * swap of two letters counts one. */
static size_t distance(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    if (na > NAME_MAX_LEN || nb > NAME_MAX_LEN)
        return (size_t)-1;
    static const size_t w = NAME_MAX_LEN + 1;
    size_t *d = malloc((na + 1) * w * sizeof *d);
    if (d == NULL)
        return (size_t)-1;
    for (size_t i = 0; i <= na; i++)
        d[i * w] = i;
    for (size_t j = 0; j <= nb; j++)
        d[j] = j;
    for (size_t i = 1; i <= na; i++) {
        for (size_t j = 1; j <= nb; j++) {
            size_t cost = fold(a[i - 1]) != fold(b[j - 1]);
            size_t best = d[(i - 1) * w + j] + 1;
            if (d[i * w + j - 1] + 1 < best)
                best = d[i * w + j - 1] + 1;
            if (d[(i - 1) * w + j - 1] + cost < best)
                best = d[(i - 1) * w + j - 1] + cost;
            if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) &&
                fold(a[i - 2]) == fold(b[j - 1]) &&
                d[(i - 2) * w + j - 2] + 1 < best)
                best = d[(i - 2) * w + j - 2] + 1;
            d[i * w + j] = best;
        }
    }
    size_t r = d[na * w + nb];
    free(d);
    return r;
}

/* The closest name, if it is close enough to be what was meant: at most
 * a third of what was typed wrong (one letter of a short name). */
static const char *closest(const char *typed, const char *const *names,
                           size_t n)
{
    size_t parts = count_parts(typed), best = (size_t)-1;
    const char *found = NULL;
    for (size_t i = 0; i < n; i++) {
        size_t dist = distance(typed, tail_parts(names[i], parts));
        if (dist < best) {
            best = dist;
            found = names[i];
        }
    }
    size_t allowed = strlen(typed) / 3;
    return best <= (allowed > 1 ? allowed : 1) ? found : NULL;
}

void names_resolve(names_result *out, const char *typed,
                   const char *const *names, size_t n)
{
    *out = (names_result){ .verdict = NAMES_NONE };
    if (typed[0] == '.') /* grpcurl writes full names with a leading dot */
        typed++;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(names[i], typed) == 0) { /* exactly: nothing to judge */
            *out = (names_result){ NAMES_FOUND, names[i], NULL, 1 };
            return;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (!matches(typed, names[i]))
            continue;
        if (out->n_matches++ == 0)
            out->name = names[i];
        else if (out->n_matches == 2)
            out->other = names[i];
    }
    if (out->n_matches == 1)
        out->verdict = NAMES_FOUND;
    else if (out->n_matches > 1)
        out->verdict = NAMES_AMBIGUOUS;
    else
        out->name = closest(typed, names, n);
}

/* ---- the lists of names ------------------------------------------------- */

static bool add_copy(namelist *l, const char *name, size_t len)
{
    for (size_t i = 0; i < l->n; i++)
        if (strncmp(l->v[i], name, len) == 0 && l->v[i][len] == '\0')
            return true;
    char **v = tkc_grow(l->v, &l->cap, l->n + 1, sizeof *v, 64);
    if (v == NULL)
        return false;
    l->v = v;
    char *copy = strndup(name, len);
    if (copy == NULL)
        return false;
    l->v[l->n++] = copy;
    return true;
}

/* A method's name, or its service's (what comes before the '/'). */
static bool add_method(namelist *l, const char *method, unsigned what)
{
    const char *slash = strchr(method, '/');
    bool ok = true;
    if (what & NAMES_METHODS)
        ok = add_copy(l, method, strlen(method));
    if (ok && (what & NAMES_SERVICES) && slash != NULL)
        ok = add_copy(l, method, (size_t)(slash - method));
    return ok;
}

/* The catalog has no list of enums: they are found through the fields
 * that use them (every enum of proto/ has one). */
static bool add_message(namelist *l, const ProtobufCMessageDescriptor *m,
                        unsigned what)
{
    if ((what & NAMES_MESSAGES) && !add_copy(l, m->name, strlen(m->name)))
        return false;
    for (unsigned i = 0; (what & NAMES_ENUMS) && i < m->n_fields; i++) {
        const ProtobufCEnumDescriptor *e = m->fields[i].descriptor;
        if (m->fields[i].type == PROTOBUF_C_TYPE_ENUM &&
            !add_copy(l, e->name, strlen(e->name)))
            return false;
    }
    return true;
}

bool names_add_catalog(namelist *l, unsigned what)
{
    for (size_t i = 0; i < tk_catalog_method_count(); i++)
        if (!add_method(l, tk_catalog_method(i)->name, what))
            return false;
    for (size_t i = 0; i < tk_catalog_message_count(); i++)
        if (!add_message(l, tk_catalog_message(i), what))
            return false;
    return true;
}

bool names_add_served(namelist *l, const Tk__V1__ListMethodsReply *list,
                      unsigned what)
{
    for (size_t i = 0; i < list->n_methods; i++)
        if (!add_method(l, list->methods[i]->name, what))
            return false;
    return true;
}

void names_fini(namelist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    *l = (namelist){ 0 };
}

/* ---- names as people type them ---------------------------------------------
 */

/* What matched nothing, or more than one name, said as a usage error. */
int tkcall__no_match(const tkcall *t, const char *what, const char *typed,
                     const names_result *r)
{
    if (r->verdict == NAMES_AMBIGUOUS)
        return tkcall__usage_error(
            "\"%s\" could be %s, %s%s: write more of the "
            "name",
            typed, r->name, r->other, r->n_matches > 2 ? " and more" : "");
    if (r->name != NULL)
        return tkcall__usage_error(
            "unknown %s \"%s\"; did you mean %s? (`tkcall "
            "list` shows the methods tkd serves)",
            what, typed, r->name);
    return tkcall__usage_error(
        "unknown %s \"%s\": neither tkcall's catalog nor tkd "
        "at %s knows it; `tkcall list` shows the methods tkd "
        "serves",
        what, typed, t->addr);
}

/* The commands of dispatch, for a hint when a word is neither. */
static const char *const command_names[] = { "list", "describe" };

/* The method typed names, in full in *out (to free): the catalog's, else
 * one tkd serves. A name with a '/' that tkd cannot be asked about goes
 * on as typed (the call then says why tkd did not answer). */
int tkcall__find_method(tkcall *t, const char *typed, char **out)
{
    namelist l = { 0 };
    names_result r;
    Tk__V1__ListMethodsReply *list = NULL;
    tk_status st = { 0 };
    int rv = TKCALL_EXIT_OK;
    if (!names_add_catalog(&l, NAMES_METHODS)) {
        rv = tkcall__out_of_memory();
        goto done;
    }
    names_resolve(&r, typed, (const char *const *)l.v, l.n);
    if (r.verdict == NAMES_NONE) {
        if (tkcall__list_methods(t, "", &list, &st) != TK_OK) {
            if (strchr(typed, '/') != NULL) {
                r = (names_result){ NAMES_FOUND, typed, NULL, 1 };
            } else if (r.name == NULL) { /* nothing to say but why */
                rv = tkcall_report(&st);
                goto done;
            }
        } else if (!names_add_served(&l, list, NAMES_METHODS)) {
            rv = tkcall__out_of_memory();
            goto done;
        } else {
            names_resolve(&r, typed, (const char *const *)l.v, l.n);
        }
    }
    names_result cmd;
    names_resolve(&cmd, typed, command_names, 2);
    if (r.verdict == NAMES_NONE && r.name == NULL && cmd.name != NULL)
        rv = tkcall__usage_error("unknown command \"%s\"; did you mean %s?",
                                 typed, cmd.name); /* "lsit" */
    else if (r.verdict != NAMES_FOUND)
        rv = tkcall__no_match(t, "method", typed, &r);
    else if ((*out = strdup(r.name)) == NULL)
        rv = tkcall__out_of_memory();
done:
    tk_status_clear(&st);
    if (list != NULL)
        protobuf_c_message_free_unpacked(&list->base, NULL);
    names_fini(&l);
    return rv;
}
