/* SPDX-License-Identifier: MIT */
/*
 * services_render: a ServiceSpec made from the input, rendered by
 * tk.v1.Services/Render for launchd and for systemd, through the receive
 * path (rpc__test_serve_frame) and tk.v1.Services's own validation, as a
 * caller gets it.
 *
 * The input is fields split by NUL bytes: options (restart from the
 * first byte, a digit: 0 unspecified, 1 ON_FAILURE, 2 ALWAYS, 3 NEVER,
 * others unknown; throttle_seconds from the digits after it), label,
 * program, working_dir, stdout_path, stderr_path, then any number of
 * "aARG" (an argument), "eNAME=VALUE" (an environment entry) or anything
 * else (an argument, whole). A program that is not an absolute path picks
 * one of a few real executables with awkward names (space, '%', '"', '\',
 * '&', '<', ';', quotes, UTF-8) by its first byte.
 *
 * Checked: the two backends accept the same specs (spec.c: valid
 * everywhere or nowhere); a definition is UTF-8; the plist is well-formed
 * XML in tk's one layout (keys in order), whose strings, entities undone,
 * are the spec's (Label, Program, ProgramArguments, EnvironmentVariables
 * sorted with the last of a name winning, paths, ThrottleInterval); the
 * unit's every line is a comment, a section or Key=Value, none ends in a
 * backslash (which would join the next), and its values, unquoted as
 * systemd.syntax(7) says and with specifiers ('%%') and variables ('$$',
 * ExecStart's arguments) undone, are the spec's.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "services/services.h"
#include "common/common.h"
#include "obs/obs.h"
#include "rpc/rpc.h"
#include "tk/v1/rpc.pb-c.h"
#include "tk/v1/services.pb-c.h"

#define MAX_FIELDS 64

static rpc_server *srv;
static services *svc;
static char home[256];
static uint32_t next_conn;

/* Real executables the program picks from; created at start. */
static const char *const programs[] = {
    "plain",       "with space", "per%cent", "quote\"d",    "back\\slash",
    "amp&lt;<gt>", "semi;colon", "-dash",    "caf\xc3\xa9", "apo'strophe",
};
#define N_PROGRAMS (sizeof programs / sizeof programs[0])
static char program_paths[N_PROGRAMS][512];

/* ---- the spec -------------------------------------------------------------
 */

typedef struct env_kv {
    const char *name, *value;
} env_kv;

typedef struct spec {
    int restart;
    unsigned throttle;
    const char *label, *program, *working_dir, *stdout_path, *stderr_path;
    const char *args[MAX_FIELDS];
    size_t n_args;
    env_kv env[MAX_FIELDS];
    size_t n_env;
    char *fields[MAX_FIELDS]; /* owned */
    size_t n_fields;
} spec;

static void spec_free(spec *s)
{
    for (size_t i = 0; i < s->n_fields; i++)
        free(s->fields[i]);
}

static const char *field(const spec *s, size_t i)
{
    return i < s->n_fields ? s->fields[i] : "";
}

static void spec_parse(spec *s, const uint8_t *data, size_t size)
{
    memset(s, 0, sizeof *s);
    size_t at = 0;
    bool more = true;
    while (more && s->n_fields < MAX_FIELDS) {
        const uint8_t *nul = memchr(data + at, 0, size - at);
        size_t n = nul != NULL ? (size_t)(nul - (data + at)) : size - at;
        char *f = malloc(n + 1);
        FUZZ_CHECK(f != NULL, "out of memory");
        memcpy(f, data + at, n);
        f[n] = '\0';
        s->fields[s->n_fields++] = f;
        more = nul != NULL;
        at += n + more;
    }
    const char *opt = field(s, 0);
    s->restart = opt[0] >= '0' && opt[0] <= '9' ? opt[0] - '0' : 0;
    s->throttle = opt[0] != '\0' ? (unsigned)strtoul(opt + 1, NULL, 10) : 0;
    s->label = field(s, 1);
    const char *prog = field(s, 2);
    s->program = prog[0] == '/'
                     ? prog
                     : program_paths[(unsigned char)prog[0] % N_PROGRAMS];
    s->working_dir = field(s, 3);
    s->stdout_path = field(s, 4);
    s->stderr_path = field(s, 5);
    for (size_t i = 6; i < s->n_fields; i++) {
        char *f = s->fields[i];
        char *eq = strchr(f, '=');
        if (f[0] == 'e' && eq != NULL) {
            *eq = '\0';
            s->env[s->n_env++] = (env_kv){ f + 1, eq + 1 };
        } else {
            s->args[s->n_args++] = f[0] == 'a' ? f + 1 : f;
        }
    }
}

/* The environment as rendered: by name (bytes), the last of a name. */
static size_t env_expected(const spec *s, env_kv *out)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n_env; i++) {
        size_t at = n;
        for (size_t k = 0; k < n; k++)
            if (strcmp(out[k].name, s->env[i].name) == 0)
                at = k;
        out[at] = s->env[i];
        if (at == n)
            n++;
    }
    for (size_t i = 1; i < n; i++)
        for (size_t k = i; k > 0 && strcmp(out[k - 1].name, out[k].name) > 0;
             k--) {
            env_kv t = out[k];
            out[k] = out[k - 1];
            out[k - 1] = t;
        }
    return n;
}

/* ---- Render through the receive path ---------------------------------------
 */

typedef struct rendered {
    Tk__V1__Reply *reply;
    Tk__V1__ServiceRenderReply *out; /* NULL unless OK */
} rendered;

static rendered render(const spec *s, Tk__V1__ServiceManager__Kind backend)
{
    Tk__V1__ServiceSpec sp = TK__V1__SERVICE_SPEC__INIT;
    sp.label = (char *)s->label;
    sp.program = (char *)s->program;
    sp.args = (char **)s->args;
    sp.n_args = s->n_args;
    Tk__V1__ServiceSpec__EnvEntry entries[MAX_FIELDS];
    Tk__V1__ServiceSpec__EnvEntry *env[MAX_FIELDS];
    for (size_t i = 0; i < s->n_env; i++) {
        tk__v1__service_spec__env_entry__init(&entries[i]);
        entries[i].key = (char *)s->env[i].name;
        entries[i].value = (char *)s->env[i].value;
        env[i] = &entries[i];
    }
    sp.env = env;
    sp.n_env = s->n_env;
    sp.working_dir = (char *)s->working_dir;
    sp.stdout_path = (char *)s->stdout_path;
    sp.stderr_path = (char *)s->stderr_path;
    sp.restart = (Tk__V1__ServiceSpec__Restart)s->restart;
    sp.throttle_seconds = s->throttle;
    Tk__V1__ServiceRenderRequest rr = TK__V1__SERVICE_RENDER_REQUEST__INIT;
    rr.spec = &sp;
    rr.backend = backend;

    Tk__V1__Request req = TK__V1__REQUEST__INIT;
    req.call_id = 1;
    req.method = "tk.v1.Services/Render";
    req.payload.len = tk__v1__service_render_request__get_packed_size(&rr);
    req.payload.data = malloc(req.payload.len + 1);
    FUZZ_CHECK(req.payload.data != NULL, "out of memory");
    tk__v1__service_render_request__pack(&rr, req.payload.data);
    size_t flen = tk__v1__request__get_packed_size(&req);
    uint8_t *frame = malloc(flen);
    FUZZ_CHECK(frame != NULL, "out of memory");
    tk__v1__request__pack(&req, frame);

    rpc_peer peer = { .conn = ++next_conn, .uid = -1, .pid = -1 };
    uint8_t *out = NULL;
    size_t out_len = 0;
    FUZZ_CHECK(rpc__test_serve_frame(srv, &peer, frame, flen, &out, &out_len) ==
                       0 &&
                   out != NULL,
               "no reply");
    rendered r = { tk__v1__reply__unpack(NULL, out_len, out), NULL };
    FUZZ_CHECK(r.reply != NULL && r.reply->status != NULL, "a bad reply");
    if (r.reply->status->code == TK__V1__STATUS__CODE__OK) {
        r.out = tk__v1__service_render_reply__unpack(NULL, r.reply->payload.len,
                                                     r.reply->payload.data);
        FUZZ_CHECK(r.out != NULL && r.out->definition != NULL,
                   "an OK Render without a definition");
        FUZZ_CHECK(tkc_utf8_valid(r.out->definition, strlen(r.out->definition)),
                   "a definition that is not UTF-8");
    }
    free(out);
    free(frame);
    free(req.payload.data);
    return r;
}

static void rendered_free(rendered *r)
{
    if (r->out != NULL)
        tk__v1__service_render_reply__free_unpacked(r->out, NULL);
    tk__v1__reply__free_unpacked(r->reply, NULL);
}

/* ---- the plist ----------------------------------------------------------- */

/* An XML 1.0 Char (the plist's text must be nothing else). */
static bool xml_char(uint32_t c)
{
    return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) ||
           (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF);
}

/* Decodes the UTF-8 character at s (valid: the definition was checked). */
static size_t utf8_at(const unsigned char *s, uint32_t *c)
{
    if (s[0] < 0x80) {
        *c = s[0];
        return 1;
    }
    size_t n = s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : 2;
    uint32_t v = s[0] & (0x7Fu >> n);
    for (size_t i = 1; i < n; i++)
        v = v << 6 | (s[i] & 0x3Fu);
    *c = v;
    return n;
}

typedef struct xml {
    const char *p;
    char text[8192]; /* the last text read, entities undone */
} xml;

static bool xml_lit(xml *x, const char *s)
{
    size_t n = strlen(s);
    if (strncmp(x->p, s, n) != 0)
        return false;
    x->p += n;
    return true;
}

static void xml_ws(xml *x)
{
    while (*x->p == '\n' || *x->p == '\t')
        x->p++;
}

/* Character data up to the next '<', entities undone, into x->text. */
static void xml_text(xml *x)
{
    static const struct {
        const char *ent;
        char c;
    } ents[] = { { "&amp;", '&' },
                 { "&lt;", '<' },
                 { "&gt;", '>' },
                 { "&quot;", '"' },
                 { "&apos;", '\'' } };
    size_t n = 0;
    while (*x->p != '<') {
        FUZZ_CHECK(*x->p != '\0', "the plist ends inside text");
        FUZZ_CHECK(n + 1 < sizeof x->text, "text too long");
        if (*x->p == '&') {
            size_t k = 0;
            while (k < sizeof ents / sizeof ents[0] &&
                   strncmp(x->p, ents[k].ent, strlen(ents[k].ent)) != 0)
                k++;
            FUZZ_CHECK(k < sizeof ents / sizeof ents[0],
                       "a bare '&' in the plist: %.20s", x->p);
            x->text[n++] = ents[k].c;
            x->p += strlen(ents[k].ent);
            continue;
        }
        uint32_t c;
        size_t len = utf8_at((const unsigned char *)x->p, &c);
        FUZZ_CHECK(xml_char(c), "U+%04X is no XML character", (unsigned)c);
        FUZZ_CHECK(c != '>' || n < 2 || x->text[n - 1] != ']' ||
                       x->text[n - 2] != ']',
                   "\"]]>\" in the plist's text");
        FUZZ_CHECK(n + len < sizeof x->text, "text too long");
        memcpy(x->text + n, x->p, len);
        n += len;
        x->p += len;
    }
    x->text[n] = '\0';
}

/* <tag>text</tag>: the text in x->text. */
static void xml_element(xml *x, const char *tag)
{
    char open[32], close[32];
    snprintf(open, sizeof open, "<%s>", tag);
    snprintf(close, sizeof close, "</%s>", tag);
    xml_ws(x);
    FUZZ_CHECK(xml_lit(x, open), "want %s at: %.40s", open, x->p);
    xml_text(x);
    FUZZ_CHECK(xml_lit(x, close), "want %s at: %.40s", close, x->p);
}

static void want_string(xml *x, const char *want, const char *what)
{
    xml_element(x, "string");
    FUZZ_CHECK(strcmp(x->text, want) == 0, "%s: \"%s\", want \"%s\"", what,
               x->text, want);
}

/* The next <key>; false at </dict>. Keys come in increasing order. */
static bool next_key(xml *x, char *last, size_t cap)
{
    xml_ws(x);
    if (xml_lit(x, "</dict>"))
        return false;
    xml_element(x, "key");
    FUZZ_CHECK(strcmp(last, x->text) < 0, "key \"%s\" after \"%s\"", x->text,
               last);
    snprintf(last, cap, "%s", x->text);
    return true;
}

static void plist_env(xml *x, const spec *s)
{
    env_kv want[MAX_FIELDS];
    size_t n = env_expected(s, want), i = 0;
    char last[8192] = "";
    xml_ws(x);
    FUZZ_CHECK(xml_lit(x, "<dict>"), "EnvironmentVariables is no dict");
    while (next_key(x, last, sizeof last)) {
        FUZZ_CHECK(i < n && strcmp(x->text, want[i].name) == 0,
                   "environment name \"%s\"", x->text);
        want_string(x, want[i].value, "an environment value");
        i++;
    }
    FUZZ_CHECK(i == n, "%zu environment entries, want %zu", i, n);
}

static void plist_value(xml *x, const spec *s, const char *key, bool *seen)
{
    unsigned throttle = s->throttle != 0 ? s->throttle : 5;
    if (strcmp(key, "EnvironmentVariables") == 0) {
        plist_env(x, s);
    } else if (strcmp(key, "KeepAlive") == 0) {
        xml_ws(x);
        FUZZ_CHECK(xml_lit(x, "<true/>") || xml_lit(x, "<false/>") ||
                       xml_lit(x, "<dict>\n\t\t<key>SuccessfulExit</key>\n"
                                  "\t\t<false/>\n\t</dict>"),
                   "KeepAlive: %.40s", x->p);
    } else if (strcmp(key, "Label") == 0) {
        want_string(x, s->label, "Label");
    } else if (strcmp(key, "Program") == 0) {
        want_string(x, s->program, "Program");
    } else if (strcmp(key, "ProgramArguments") == 0) {
        xml_ws(x);
        FUZZ_CHECK(xml_lit(x, "<array>"), "ProgramArguments is no array");
        want_string(x, s->program, "argv[0]");
        for (size_t i = 0; i < s->n_args; i++)
            want_string(x, s->args[i], "an argument");
        xml_ws(x);
        FUZZ_CHECK(xml_lit(x, "</array>"), "more arguments than the spec's");
    } else if (strcmp(key, "RunAtLoad") == 0) {
        xml_ws(x);
        FUZZ_CHECK(xml_lit(x, "<true/>"), "RunAtLoad");
    } else if (strcmp(key, "ThrottleInterval") == 0) {
        xml_element(x, "integer");
        FUZZ_CHECK(strtoul(x->text, NULL, 10) == throttle,
                   "ThrottleInterval %s", x->text);
    } else if (strcmp(key, "StandardErrorPath") == 0) {
        want_string(x, s->stderr_path, key);
        seen[0] = true;
    } else if (strcmp(key, "StandardOutPath") == 0) {
        want_string(x, s->stdout_path, key);
        seen[1] = true;
    } else if (strcmp(key, "WorkingDirectory") == 0) {
        want_string(x, s->working_dir, key);
        seen[2] = true;
    } else {
        FUZZ_CHECK(false, "an unknown key %s", key);
    }
}

static void check_plist(const char *def, const spec *s)
{
    xml x = { .p = strstr(def, "<plist version=\"1.0\">\n<dict>") };
    FUZZ_CHECK(x.p != NULL && strncmp(def, "<?xml version=\"1.0\"", 19) == 0,
               "no plist prolog");
    x.p += strlen("<plist version=\"1.0\">\n<dict>");
    bool seen[3] = { false, false, false };
    char last[64] = "";
    while (next_key(&x, last, sizeof last))
        plist_value(&x, s, last, seen);
    FUZZ_CHECK(seen[0] == (s->stderr_path[0] != '\0') &&
                   seen[1] == (s->stdout_path[0] != '\0') &&
                   seen[2] == (s->working_dir[0] != '\0'),
               "the paths set are not the spec's");
    xml_ws(&x);
    FUZZ_CHECK(strcmp(x.p, "</plist>\n") == 0, "after the dict: %.40s", x.p);
}

/* ---- the unit ------------------------------------------------------------ */

/* Undoes '%%' (and '$$' with dollars) in place; false on a lone '%' or
 * '$', which systemd would expand. */
static bool unescape_unit(char *s, bool dollars)
{
    char *o = s;
    for (const char *p = s; *p != '\0'; p++) {
        if (*p == '%' || (dollars && *p == '$')) {
            if (p[1] != *p)
                return false;
            p++;
        }
        *o++ = *p;
    }
    *o = '\0';
    return true;
}

/* One "..." word at *p, C escapes \" \\ \t undone, into out; moves *p. */
static bool quoted_word(const char **p, char *out, size_t cap)
{
    const char *q = *p;
    if (*q++ != '"')
        return false;
    size_t n = 0;
    for (; *q != '"'; q++) {
        if (*q == '\0' || *q == '\n' || n + 1 >= cap)
            return false;
        char c = *q;
        if (c == '\\') {
            q++;
            if (*q == '"' || *q == '\\')
                c = *q;
            else if (*q == 't')
                c = '\t';
            else
                return false;
        }
        out[n++] = c;
    }
    out[n] = '\0';
    *p = q + 1;
    return true;
}

static void check_exec(const char *v, const spec *s)
{
    char w[8192];
    for (size_t i = 0; i <= s->n_args; i++) {
        if (i > 0)
            FUZZ_CHECK(*v++ == ' ', "ExecStart: words not one space apart");
        FUZZ_CHECK(quoted_word(&v, w, sizeof w) && unescape_unit(w, i > 0),
                   "ExecStart: word %zu is not quoted as systemd reads it", i);
        const char *want = i == 0 ? s->program : s->args[i - 1];
        FUZZ_CHECK(strcmp(w, want) == 0,
                   "ExecStart word %zu: \"%s\", want "
                   "\"%s\"",
                   i, w, want);
    }
    FUZZ_CHECK(*v == '\0', "ExecStart: more words than the spec's: %.40s", v);
}

static void check_env_line(const char *v, const env_kv *want)
{
    char w[8192], kv[8192];
    FUZZ_CHECK(quoted_word(&v, w, sizeof w) && *v == '\0' &&
                   unescape_unit(w, false),
               "Environment= is not one quoted word");
    snprintf(kv, sizeof kv, "%s=%s", want->name, want->value);
    FUZZ_CHECK(strcmp(w, kv) == 0, "Environment=\"%s\", want \"%s\"", w, kv);
}

static void check_path_value(const char *v, const char *want, const char *key)
{
    char w[8192];
    snprintf(w, sizeof w, "%s", v);
    FUZZ_CHECK(unescape_unit(w, false) && strcmp(w, want) == 0, "%s%s, want %s",
               key, v, want);
}

typedef struct unit_seen {
    size_t env;
    bool exec, wd, out, err;
} unit_seen;

static void unit_line(char *line, const spec *s, const env_kv *env,
                      size_t n_env, unit_seen *seen)
{
    size_t n = strlen(line);
    FUZZ_CHECK(n == 0 || line[n - 1] != '\\',
               "a line ends in a backslash: %.60s", line);
    if (n == 0 || line[0] == '#' || line[0] == '[')
        return;
    char *eq = strchr(line, '=');
    FUZZ_CHECK(eq != NULL, "a line that is no Key=Value: %.60s", line);
    *eq = '\0';
    const char *k = line, *v = eq + 1;
    char want[64];
    if (strcmp(k, "ExecStart") == 0) {
        check_exec(v, s);
        seen->exec = true;
    } else if (strcmp(k, "Environment") == 0) {
        FUZZ_CHECK(seen->env < n_env, "more Environment= than the spec's");
        check_env_line(v, &env[seen->env++]);
    } else if (strcmp(k, "WorkingDirectory") == 0) {
        check_path_value(v, s->working_dir, "WorkingDirectory=");
        seen->wd = true;
    } else if (strcmp(k, "StandardOutput") == 0) {
        FUZZ_CHECK(strncmp(v, "append:", 7) == 0, "StandardOutput=%s", v);
        check_path_value(v + 7, s->stdout_path, "StandardOutput=append:");
        seen->out = true;
    } else if (strcmp(k, "StandardError") == 0) {
        FUZZ_CHECK(strncmp(v, "append:", 7) == 0, "StandardError=%s", v);
        check_path_value(v + 7, s->stderr_path, "StandardError=append:");
        seen->err = true;
    } else if (strcmp(k, "Description") == 0) {
        check_path_value(v, s->label, "Description=");
    } else if (strcmp(k, "RestartSec") == 0) {
        snprintf(want, sizeof want, "%u", s->throttle != 0 ? s->throttle : 5);
        FUZZ_CHECK(strcmp(v, want) == 0, "RestartSec=%s", v);
    }
}

static void check_unit(const char *def, const spec *s)
{
    env_kv env[MAX_FIELDS];
    size_t n_env = env_expected(s, env);
    size_t len = strlen(def);
    FUZZ_CHECK(len > 0 && def[len - 1] == '\n', "the unit ends mid-line");
    char *copy = strdup(def);
    FUZZ_CHECK(copy != NULL, "out of memory");
    unit_seen seen = { 0 };
    for (char *line = copy, *nl; (nl = strchr(line, '\n')) != NULL;
         line = nl + 1) {
        *nl = '\0';
        unit_line(line, s, env, n_env, &seen);
    }
    FUZZ_CHECK(seen.exec && seen.env == n_env &&
                   seen.wd == (s->working_dir[0] != '\0') &&
                   seen.out == (s->stdout_path[0] != '\0') &&
                   seen.err == (s->stderr_path[0] != '\0'),
               "the unit's settings are not the spec's");
    free(copy);
}

/* ---- libFuzzer ------------------------------------------------------------
 */

static void cleanup(void)
{
    char path[1024];
    for (size_t i = 0; i < N_PROGRAMS; i++)
        unlink(program_paths[i]);
    snprintf(path, sizeof path, "%s/bin", home);
    rmdir(path);
    rmdir(home);
}

static void make_programs(void)
{
    char bin[300];
    snprintf(bin, sizeof bin, "%s/bin", home);
    FUZZ_CHECK(mkdir(bin, 0700) == 0, "mkdir %s: %m", bin);
    for (size_t i = 0; i < N_PROGRAMS; i++) {
        snprintf(program_paths[i], sizeof program_paths[i], "%s/%s", bin,
                 programs[i]);
        int fd = open(program_paths[i], O_WRONLY | O_CREAT | O_EXCL, 0700);
        FUZZ_CHECK(fd >= 0, "cannot create %s: %m", program_paths[i]);
        close(fd);
    }
}

/* A home with the programs, tk.v1.Services and a server, once. */
static void setup(void)
{
    obs_log_set_level(OBS_LOG_ERROR);
    const char *tmp = getenv("TMPDIR");
    snprintf(home, sizeof home, "%s/tk-fuzz-services-XXXXXX",
             tmp != NULL && tmp[0] == '/' ? tmp : "/tmp");
    FUZZ_CHECK(mkdtemp(home) != NULL, "mkdtemp: %m");
    FUZZ_CHECK(atexit(cleanup) == 0, "atexit");
    make_programs();
    services_config rc = { .home = home,
                           .config_home = home,
                           .runtime_dir = home,
                           .path = home, /* no launchctl, no systemctl */
                           .linger_dir = home };
    static const char *const listen[] = { "ipc:///nonexistent/tk-fuzz.sock" };
    rpc_config cfg;
    rpc_config_init(&cfg);
    cfg.listen = listen;
    cfg.n_listen = 1;
    char err[256];
    FUZZ_CHECK(services_new(&svc, &rc, err, sizeof err) == 0, "%s", err);
    FUZZ_CHECK(rpc_server_new(&srv, &cfg, err, sizeof err) == 0, "%s", err);
    FUZZ_CHECK(services_register(svc, srv, err, sizeof err) == 0, "%s", err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (srv == NULL)
        setup();
    spec s;
    spec_parse(&s, data, size);
    rendered l = render(&s, TK__V1__SERVICE_MANAGER__KIND__LAUNCHD);
    rendered u = render(&s, TK__V1__SERVICE_MANAGER__KIND__SYSTEMD);
    FUZZ_CHECK(l.reply->status->code == u.reply->status->code,
               "launchd answers %d (%s), systemd %d (%s)",
               (int)l.reply->status->code, l.reply->status->reason,
               (int)u.reply->status->code, u.reply->status->reason);
    if (l.out != NULL)
        check_plist(l.out->definition, &s);
    if (u.out != NULL)
        check_unit(u.out->definition, &s);
    rendered_free(&l);
    rendered_free(&u);
    spec_free(&s);
    return 0;
}
