/* SPDX-License-Identifier: MIT */
/* The fields the .proto files declare as paths (option (tk.v1.path), in the
 * catalog: what tkcall makes absolute and describe marks) are the fields
 * tkd checks as paths, against a real tkd with --root:
 *
 *   - every PATH_IN_ROOTS field, set to "/" (outside the root), is refused
 *     PATH_OUTSIDE_ROOT, and set to a relative path, BAD_PATH;
 *   - every PATH_ABSOLUTE field (Services' spec, through Services/Render,
 *     which touches nothing), set to a relative path, is refused with a
 *     BAD_ reason;
 *   - the negative control: every other string field of a READ of Git and
 *     Search, set to "/", is never refused PATH_OUTSIDE_ROOT: a path field
 *     tkd checks but the .proto does not declare fails here.
 * Every other field holds a value its checks accept ("x", the root's
 * repository for the path fields), so that the field under test is the
 * one judged. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixture.h"

typedef struct world {
    char dir[200];
    char repo[260];
    ts_fx_daemon d;
} world;

static int setup(void **state)
{
    world *w = calloc(1, sizeof *w);
    if (w == NULL || ts_mkdtemp(w->dir, sizeof w->dir, "pathfields") != 0)
        return -1;
    snprintf(w->repo, sizeof w->repo, "%s/repo", w->dir);
    ts_proc p;
    const char *git[] = { "/usr/bin/git", "init", "-q", w->repo, NULL };
    if (ts_spawn(&p, git, NULL) != 0 || ts_finish(&p, TS_FX_WAIT_MS) != 0)
        return -1;
    ts_proc_free(&p);
    const char *args[] = { "--root", w->dir, NULL };
    ts_fx_daemon_start(&w->d,
                       &(ts_fx_daemon_opts){ .dir = w->dir, .args = args });
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    world *w = *state;
    ts_fx_daemon_stop(&w->d);
    ts_rmtree(w->dir);
    free(w);
    return 0;
}

static tk_path_kind path_of(const ProtobufCMessageDescriptor *m,
                            const ProtobufCFieldDescriptor *f)
{
    const tk_field_note *note = tk_catalog_find_field(m->name, f->name);
    return note != NULL ? note->path : TK_PATH_NONE;
}

/* A value the field's checks accept. */
static const char *filler(const world *w, const ProtobufCMessageDescriptor *m,
                          const ProtobufCFieldDescriptor *f)
{
    static const struct {
        const char *field, *value;
    } named[] = {
        { "program", "/bin/true" },       /* ServiceSpec */
        { "label", "dev.tk.pathfields" }, /* ServiceSpec */
        { "key", "user.name" }, /* Git/ConfigSet, ConfigGet: allowed */
    };
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        if (strcmp(f->name, named[i].field) == 0)
            return named[i].value;
    return path_of(m, f) == TK_PATH_IN_ROOTS   ? w->repo
           : path_of(m, f) == TK_PATH_ABSOLUTE ? w->dir
                                               : "x";
}

/* A request of desc: string fields "x", path fields a good path
 * (program: /bin/true), nested messages alike, and the field named
 * `field` of the message named `in` set to value. Freed with free_req. */
static ProtobufCMessage *make_req(const world *w,
                                  const ProtobufCMessageDescriptor *desc,
                                  const char *in, const char *field,
                                  const char *value)
{
    ProtobufCMessage *m = calloc(1, desc->sizeof_message);
    assert_non_null(m);
    protobuf_c_message_init(desc, m);
    for (unsigned i = 0; i < desc->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &desc->fields[i];
        void *at = (char *)m + f->offset;
        if (f->label == PROTOBUF_C_LABEL_REPEATED ||
            (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF))
            continue;
        if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
            *(ProtobufCMessage **)at =
                make_req(w, f->descriptor, in, field, value);
            continue;
        }
        if (f->type != PROTOBUF_C_TYPE_STRING)
            continue;
        const char *v = filler(w, desc, f);
        if (strcmp(desc->name, in) == 0 && strcmp(f->name, field) == 0)
            v = value;
        *(const char **)at = v;
    }
    return m;
}

static void free_req(ProtobufCMessage *m)
{
    const ProtobufCMessageDescriptor *desc = m->descriptor;
    for (unsigned i = 0; i < desc->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &desc->fields[i];
        ProtobufCMessage **sub = (void *)((char *)m + f->offset);
        if (f->type == PROTOBUF_C_TYPE_MESSAGE &&
            f->label != PROTOBUF_C_LABEL_REPEATED &&
            !(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) && *sub != NULL)
            free_req(*sub);
    }
    free(m);
}

/* The reason tkd answers method with in.field = value ("" for OK). */
static char *reason_of(world *w, const tk_method_desc *md, const char *in,
                       const char *field, const char *value)
{
    ProtobufCMessage *req = make_req(w, md->request, in, field, value);
    ProtobufCMessage *reply = NULL;
    tk_status st = { 0 };
    tk_call_opts opts = { .timeout_ms = 20000 };
    tk_call(w->d.client, md->name, req, md->reply, &reply, &opts, &st);
    char *reason = strdup(st.reason != NULL ? st.reason : "");
    if (reply != NULL)
        protobuf_c_message_free_unpacked(reply, NULL);
    tk_status_clear(&st);
    free_req(req);
    return reason;
}

/* The methods this test may call with made-up fields: none of them acts
 * before its paths are checked, and Render touches nothing. */
static bool callable(const tk_method_desc *md)
{
    return strncmp(md->name, "tk.v1.Git/", 10) == 0 ||
           strcmp(md->name, "tk.v1.Search/Search") == 0 ||
           strcmp(md->name, "tk.v1.Services/Render") == 0;
}

/* Each declared path field of msg (of md's request, or inside it). */
static size_t check_declared(world *w, const tk_method_desc *md,
                             const ProtobufCMessageDescriptor *msg)
{
    size_t n = 0;
    for (unsigned i = 0; i < msg->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &msg->fields[i];
        if (f->type == PROTOBUF_C_TYPE_MESSAGE &&
            f->label != PROTOBUF_C_LABEL_REPEATED)
            n += check_declared(w, md, f->descriptor);
        tk_path_kind kind = path_of(msg, f);
        if (kind == TK_PATH_NONE)
            continue;
        n++;
        char *r = reason_of(w, md, msg->name, f->name, "rel/dir");
        if (strncmp(r, "BAD_", 4) != 0)
            fail_msg("%s: %s.%s = \"rel/dir\" answered \"%s\", not a BAD_ "
                     "reason: tkd does not check it as a path",
                     md->name, msg->name, f->name, r);
        free(r);
        if (kind != TK_PATH_IN_ROOTS)
            continue;
        r = reason_of(w, md, msg->name, f->name, "/");
        if (strcmp(r, "PATH_OUTSIDE_ROOT") != 0)
            fail_msg("%s: %s.%s = \"/\" answered \"%s\", not "
                     "PATH_OUTSIDE_ROOT: tkd does not check it against the "
                     "roots",
                     md->name, msg->name, f->name, r);
        free(r);
    }
    return n;
}

static void test_declared_fields_are_checked(void **state)
{
    world *w = *state;
    size_t n = 0;
    for (size_t i = 0; i < tk_catalog_method_count(); i++) {
        const tk_method_desc *md = tk_catalog_method(i);
        if (callable(md))
            n += check_declared(w, md, md->request);
    }
    /* 11 Git repos, WorktreeAdd's and WorktreeRemove's paths, Search's
     * root, 4 of ServiceSpec. */
    assert_int_equal(n, 18);
}

static void test_other_fields_are_not_root_checked(void **state)
{
    world *w = *state;
    size_t n = 0;
    for (size_t i = 0; i < tk_catalog_method_count(); i++) {
        const tk_method_desc *md = tk_catalog_method(i);
        if (!callable(md) || md->kind != TK_METHOD_READ ||
            strcmp(md->name, "tk.v1.Services/Render") == 0)
            continue;
        const ProtobufCMessageDescriptor *msg = md->request;
        for (unsigned j = 0; j < msg->n_fields; j++) {
            const ProtobufCFieldDescriptor *f = &msg->fields[j];
            if (f->type != PROTOBUF_C_TYPE_STRING ||
                f->label == PROTOBUF_C_LABEL_REPEATED ||
                path_of(msg, f) != TK_PATH_NONE)
                continue;
            n++;
            char *r = reason_of(w, md, msg->name, f->name, "/");
            if (strcmp(r, "PATH_OUTSIDE_ROOT") == 0)
                fail_msg("%s: %s.%s = \"/\" is checked against the roots, "
                         "but the .proto does not declare it (tk.v1.path)",
                         md->name, msg->name, f->name);
            free(r);
        }
    }
    assert_true(n > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_declared_fields_are_checked),
        cmocka_unit_test(test_other_fields_are_not_root_checked),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
