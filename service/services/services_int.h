/* SPDX-License-Identifier: MIT */
/* Internal to service/services: the spec, rendering, files, tool runs, the
 * label locks and the two backends. */
#ifndef TK_SERVICE_SERVICES_INT_H
#define TK_SERVICE_SERVICES_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proc/proc.h"
#include "services.h"
#include "common/common.h"
#include "rpc/rpc.h"
#include "tk/v1/services.methods.h"
#include "tk/v1/services.pb-c.h"
#include "tool/tool.h"

/* The launchd sequence (launchd.c says why). */
#define SERVICES_POLL_MS 200u /* launchctl print, until gone */
#define SERVICES_GONE_WAIT_MS                                                  \
    10000u                              /* ... for at most this long (the      \
                                           default of services.gone_wait_ms) */
#define SERVICES_BOOTSTRAP_ATTEMPTS 6u  /* bootstrap, on EIO only */
#define SERVICES_BACKOFF_STEP_MS 300u   /* sleep attempt * step between */
#define SERVICES_TOOL_TIMEOUT_MS 30000u /* one launchctl/systemctl run */
#define SERVICES_DEFAULT_THROTTLE 5u    /* seconds between starts */
#define SERVICES_MAX_THROTTLE 3600u
/* Twice the largest tkd install gives (3618 s, for tkd's largest grace of
 * an hour): room for another program that stops slowly, not for a typo. */
#define SERVICES_MAX_STOP_TIMEOUT 7200u
#define SERVICES_LABEL_MAX 200u
#define SERVICES_MAX_WARNINGS 4

/* The values of tk.v1.ServiceManager.Kind and ServiceSpec.Restart. */
typedef enum services_backend {
    SERVICES_AUTO = 0,
    SERVICES_LAUNCHD = 1,
    SERVICES_SYSTEMD = 2,
} services_backend;

typedef enum services_restart {
    SERVICES_ON_FAILURE = 1,
    SERVICES_ALWAYS = 2,
    SERVICES_NEVER = 3,
} services_restart;

/* ---- errors: one place per module builds a status ------------------- */

typedef struct services_error {
    rpc_code code;
    const char *reason; /* static */
    bool stopped;       /* the call's own deadline passed, or (READ) its
                           caller cancelled: the rpc layer words it */
    int fds_errno;      /* EMFILE or ENFILE: out of descriptors (the rpc
                           layer words it, rpc_call_fail_fds); else 0 */
    bool ran;           /* a tool's run ended other than by itself: run is
                           tool/'s one answer, given as it is (tool_give) */
    tool_answer run;
    char message[1536];
    char output[2048]; /* the failing tool's output, for stderr_excerpt */
} services_error;

/* Fills e and returns -1. */
int services__fail(services_error *e, rpc_code code, const char *reason,
                   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* services__fail for want of a descriptor: err is EMFILE or ENFILE. */
int services__fail_fds(services_error *e, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int services__stop(services_error *e, const char *what);
/* e from tool/'s answer a for a run that did not end by itself. */
int services__fail_run(services_error *e, const tool_answer *a);
/* The whole of s as a decimal int; def when it is not one. */
int services__atoi(const char *s, int def);

/* ---- a growable string ------------------------------------------------ */

/* rpc's byte buffer (NUL-terminated once anything was added); out of
 * memory aborts, as rpc_call_alloc does: nothing sensible to answer. */

void services__buf_add(tkc_buf *b, const char *s, size_t n);
void services__buf_puts(tkc_buf *b, const char *s);
void services__buf_printf(tkc_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
bool services__buf_equal(const tkc_buf *a, const tkc_buf *b);
/* s as one word of sh: as it is when sh takes it literally, else in single
 * quotes. */
void services__buf_shword(tkc_buf *b, const char *s);
/* argv (NULL-terminated) as one line of sh. */
void services__buf_shline(tkc_buf *b, const char *const *argv);
/* A dry run's writing of def to path: mkdir -p dir, then cat with a
 * here-document. */
void services__script_file(tkc_buf *b, const char *dir, const char *path,
                           const tkc_buf *def);

/* ---- the spec (spec.c) ------------------------------------------------ */

typedef struct services_env {
    const char *name;
    const char *value;
} services_env;

/* A validated ServiceSpec. Strings point into the message it came from. */
typedef struct services_spec {
    const char *label;
    const char *program;
    const char *const *args;
    size_t n_args;
    services_env *env; /* sorted by name, one per name (the last given wins) */
    size_t n_env;
    const char *working_dir; /* "" when unset, as the paths below */
    const char *stdout_path;
    const char *stderr_path;
    services_restart restart;
    unsigned throttle; /* seconds, never 0 */
    /* Seconds the manager waits, once it has asked the program to stop,
     * before it kills it; 0: the manager's default, and nothing rendered.
     * Set, the program stops its own children in order, as tkd does: the
     * stop signal goes to it alone (systemd KillMode=mixed). tkd install
     * sets it above tkd's shutdown bound, in the spec a Render of tkd's
     * definition is given too (stop_timeout_seconds). */
    unsigned stop_timeout;
} services_spec;

/* INVALID_ARGUMENT naming the field (reason BAD_<FIELD>) when bad. */
int services__spec_from_msg(services_spec *out, const Tk__V1__ServiceSpec *msg,
                            services_error *e);
void services__spec_fini(services_spec *s);
/* The label alone (Unregister, Status). */
int services__label_check(const char *label, services_error *e);

/* ---- rendering (render_plist.c, render_unit.c) ------------------------ */

void services__render_plist(tkc_buf *b, const services_spec *s);
void services__render_unit(tkc_buf *b, const services_spec *s);

/* ---- files (file.c) ---------------------------------------------------- */

/* 0, or -errno (-ENOENT: not installed). */
int services__file_read(tkc_buf *out, const char *path);

/* A definition written next to its destination and synced, not yet in
 * place. */
typedef struct services_staged {
    char tmp[PATH_MAX];
    char path[PATH_MAX];
    bool pending;
} services_staged;

int services__file_stage(services_staged *st, const char *path,
                         const tkc_buf *content, services_error *e);
/* rename(2) over the destination, then fsync of the directory. */
int services__file_commit(services_staged *st, services_error *e);
/* Removes the temporary file if it is still pending. */
void services__file_discard(services_staged *st);
/* *removed: the file existed. Syncs the directory. */
int services__file_remove(const char *path, bool *removed, services_error *e);

/* ---- the module and its tools (core.c, ctl.c) --------------------------- */

typedef struct services_lock_entry services_lock_entry;

struct services {
    char agents_dir[PATH_MAX]; /* ~/Library/LaunchAgents */
    char units_dir[PATH_MAX];  /* $XDG_CONFIG_HOME/systemd/user */
    char runtime_dir[PATH_MAX];
    char linger_dir[PATH_MAX];
    char user[256];
    uid_t uid;
    /* absolute paths, "" when not on PATH; fixed after services_new */
    char launchctl[PATH_MAX];
    char plutil[PATH_MAX];
    char systemctl[PATH_MAX];
    char loginctl[PATH_MAX];
    unsigned gone_wait_ms; /* services_config's, else SERVICES_GONE_WAIT_MS */
    /* the label lock table (labels.c) */
    pthread_mutex_t locks_mu;
    pthread_cond_t locks_cv;
    services_lock_entry *locks;
};

/* How one operation runs its tools: through tool/, bound by call (its
 * kind, cancel and deadline), or with no call (NULL: tkd install) as a
 * WRITE bound by deadline_ns. deadline_ns also bounds the operation's own
 * waits (the label lock, the pauses between attempts). */
typedef struct services_ctx {
    services *r;
    int64_t deadline_ns;
    rpc_call *call;
} services_ctx;

/* How a tool ran. */
typedef struct services_out {
    int exit; /* the exit status; -1 when a signal ended it */
    char *out;
    char *err;
} services_out;

/* Runs tool (an absolute path) with argv (argv[0] its name) through
 * tool/, each run bound by SERVICES_TOOL_TIMEOUT_MS too. extra_env: "K=V"
 * entries or NULL. Returns 0 when it ran to its end (whatever its status:
 * what it means is the backend's), -1 when it did not: e holds tool/'s
 * answer (the call's cause, could not start, its own bound, its output
 * cap). */
int services__run(services_out *o, const services_ctx *c, const char *tool,
                  const char *const *argv, const char *const *extra_env,
                  services_error *e);
void services__out_fini(services_out *o);
/* What the tool said, for an error: stderr, else stdout, trimmed. */
const char *services__out_text(const services_out *o);
/* Copies what the tool said into e->output. */
void services__keep_output(services_error *e, const services_out *o);
/* Sleeps ms, or fails (stopped) when that would pass the deadline. */
int services__sleep_ms(const services_ctx *c, unsigned ms, services_error *e);
/* Finds name on path into out ("" when absent). */
void services__find_tool(char *out, size_t len, const char *name,
                         const char *path);

/* ---- the label locks (labels.c) ---------------------------------------- */

void services__locks_init(services *r);
void services__locks_fini(services *r);
/* Waits until no other operation holds label, up to deadline_ns. */
int services__label_lock(services *r, const char *label, int64_t deadline_ns,
                         services_error *e);
void services__label_unlock(services *r, const char *label);

/* ---- the backends (launchd.c, systemd.c) ------------------------------- */

typedef enum services_action {
    SERVICES_UNCHANGED = 1,
    SERVICES_INSTALLED = 2,
    SERVICES_UPDATED = 3,
} services_action;

typedef struct services_result {
    services_action action;
    unsigned attempts;
    char warnings[SERVICES_MAX_WARNINGS][512];
    size_t n_warnings;
} services_result;

void services__warn(services_result *res, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

typedef struct services_status {
    bool installed;
    bool up_to_date;
    bool loaded;
    int pid;
    bool exited; /* the fields below are set */
    int exit_code;
    int exit_signal;
} services_status;

/* What the manager has of a label, as one backend reads it. */
typedef struct services_loaded {
    bool loaded;     /* launchd: in the domain; systemd: enabled */
    bool in_effect;  /* the installed file is what the manager runs:
                        launchd: loaded; systemd: enabled, no reload
                        pending, not failed */
    bool file_fresh; /* the manager has read the file as it is now */
} services_loaded;

/* One backend. def is the rendered definition; path where it goes. */
typedef struct services_backend_ops {
    services_backend kind;
    const char *name;   /* "launchd" */
    const char *suffix; /* ".plist" */
    void (*render)(tkc_buf *out, const services_spec *s);
    const char *(*dir)(const services *r);
    /* Register once the definition is rendered and the label locked. */
    int (*apply)(const services_ctx *c, const services_spec *s,
                 const char *path, const tkc_buf *def, services_result *res,
                 services_error *e);
    int (*unregister)(const services_ctx *c, const char *label,
                      const char *path, bool *removed, bool *unloaded,
                      services_error *e);
    int (*status)(const services_ctx *c, const char *label, services_status *st,
                  services_loaded *ld, services_error *e);
    /* tkd install --dry-run (def: the definition) and tkd uninstall
     * --dry-run (def NULL): what apply or unregister would write and run,
     * as a shell script into out, each step the state decides under a
     * comment saying when. Runs nothing, reads nothing. */
    void (*script)(tkc_buf *out, const services *r, const char *label,
                   const char *path, const tkc_buf *def);
} services_backend_ops;

extern const services_backend_ops services__launchd_ops;
extern const services_backend_ops services__systemd_ops;

/* ---- the operations (core.c), for the handlers and the CLI ------------- */

/* The backend for a request's value (AUTO: this platform's), or NULL with
 * INVALID_ARGUMENT in e. */
const services_backend_ops *services__backend_for(int kind, services_error *e);
/* dir/label+suffix into out. */
int services__def_path(char *out, size_t len, const services *r,
                       const services_backend_ops *ops, const char *label,
                       services_error *e);
int services__op_register(const services_ctx *c,
                          const services_backend_ops *ops,
                          const services_spec *s, services_result *res,
                          services_error *e);
int services__op_unregister(const services_ctx *c,
                            const services_backend_ops *ops, const char *label,
                            bool *removed, bool *unloaded, services_error *e);
/* spec may be NULL (see ServiceStatusReply.up_to_date). */
int services__op_status(const services_ctx *c, const services_backend_ops *ops,
                        const char *label, const services_spec *spec,
                        services_status *st, services_error *e);

/* The Register method's own timeout (tk/v1/services.proto); tkd install
 * uses it too. */
#define SERVICES_WRITE_TIMEOUT_MS TK_V1_SERVICES__REGISTER__CEILING_MS

#endif /* TK_SERVICE_SERVICES_INT_H */
