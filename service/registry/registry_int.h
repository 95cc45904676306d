/* Internal to service/registry: the spec, rendering, files, tool runs, the
 * label locks and the two backends. */
#ifndef TK_SERVICE_REGISTRY_INT_H
#define TK_SERVICE_REGISTRY_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proc/proc.h"
#include "registry.h"
#include "rpc/rpc.h"
#include "tk/v1/services.pb-c.h"

/* The launchd sequence (the field write-up, section 4). */
#define REG_POLL_MS 200u /* launchctl print, until gone */
#define REG_GONE_WAIT_MS                                                       \
    10000u                         /* ... for at most this long (the           \
                                      default of registry.gone_wait_ms) */
#define REG_BOOTSTRAP_ATTEMPTS 6u  /* bootstrap, on EIO only */
#define REG_BACKOFF_STEP_MS 300u   /* sleep attempt * step between */
#define REG_TOOL_TIMEOUT_MS 30000u /* one launchctl/systemctl run */
#define REG_DEFAULT_THROTTLE 5u    /* seconds between starts */
#define REG_MAX_THROTTLE 3600u
#define REG_LABEL_MAX 200u
#define REG_MAX_WARNINGS 4

/* The values of tk.v1.ServiceManager.Kind and ServiceSpec.Restart. */
typedef enum reg_backend {
    REG_AUTO = 0,
    REG_LAUNCHD = 1,
    REG_SYSTEMD = 2,
} reg_backend;

typedef enum reg_restart {
    REG_ON_FAILURE = 1,
    REG_ALWAYS = 2,
    REG_NEVER = 3,
} reg_restart;

/* ---- errors: one place per module builds a status ------------------- */

typedef struct reg_error {
    rpc_code code;
    const char *reason; /* static */
    bool stopped;       /* the call's own deadline passed, or (READ) its
                           caller cancelled: the rpc layer words it */
    int fds_errno;      /* EMFILE or ENFILE: out of descriptors (the rpc
                           layer words it, rpc_call_fail_fds); else 0 */
    char message[1536];
    char output[2048]; /* the failing tool's output, for stderr_excerpt */
} reg_error;

/* Fills e and returns -1. */
int reg_fail(reg_error *e, rpc_code code, const char *reason, const char *fmt,
             ...) __attribute__((format(printf, 4, 5)));
/* reg_fail for want of a descriptor: err is EMFILE or ENFILE. */
int reg_fail_fds(reg_error *e, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int reg_stop(reg_error *e, const char *what);
/* The whole of s as a decimal int; def when it is not one. */
int reg_atoi(const char *s, int def);
/* strerror, thread-safe (strerror_r into buf). */
const char *reg_strerror(int err, char *buf, size_t len);

/* ---- a growable string ------------------------------------------------ */

typedef struct reg_buf {
    char *data; /* NUL-terminated once anything was added */
    size_t len;
    size_t cap;
} reg_buf;

void reg_buf_add(reg_buf *b, const char *s, size_t n);
void reg_buf_puts(reg_buf *b, const char *s);
void reg_buf_printf(reg_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void reg_buf_free(reg_buf *b);
bool reg_buf_equal(const reg_buf *a, const reg_buf *b);

/* ---- the spec (spec.c) ------------------------------------------------ */

typedef struct reg_env {
    const char *name;
    const char *value;
} reg_env;

/* A validated ServiceSpec. Strings point into the message it came from. */
typedef struct reg_spec {
    const char *label;
    const char *program;
    const char *const *args;
    size_t n_args;
    reg_env *env; /* sorted by name, one per name (the last given wins) */
    size_t n_env;
    const char *working_dir; /* "" when unset, as the paths below */
    const char *stdout_path;
    const char *stderr_path;
    reg_restart restart;
    unsigned throttle; /* seconds, never 0 */
    /* Seconds the manager waits, once it has asked the program to stop,
     * before it kills it; 0: the manager's default, and nothing rendered.
     * Set only for tkd itself (tkd install), which stops its own children
     * in order: the stop signal goes to it alone (systemd KillMode=mixed),
     * and the timeout lies above its shutdown bound. Not in the proto. */
    unsigned stop_timeout;
} reg_spec;

/* INVALID_ARGUMENT naming the field (reason BAD_<FIELD>) when bad. */
int reg_spec_from_msg(reg_spec *out, const Tk__V1__ServiceSpec *msg,
                      reg_error *e);
void reg_spec_free(reg_spec *s);
/* The label alone (Unregister, Status). */
int reg_label_check(const char *label, reg_error *e);

/* ---- rendering (render_plist.c, render_unit.c) ------------------------ */

void reg_render_plist(reg_buf *b, const reg_spec *s);
void reg_render_unit(reg_buf *b, const reg_spec *s);

/* ---- files (file.c) ---------------------------------------------------- */

/* 0, or -errno (-ENOENT: not installed). */
int reg_file_read(reg_buf *out, const char *path);

/* A definition written next to its destination and synced, not yet in
 * place. */
typedef struct reg_staged {
    char tmp[PATH_MAX];
    char path[PATH_MAX];
    bool pending;
} reg_staged;

int reg_file_stage(reg_staged *st, const char *path, const reg_buf *content,
                   reg_error *e);
/* rename(2) over the destination, then fsync of the directory. */
int reg_file_commit(reg_staged *st, reg_error *e);
/* Removes the temporary file if it is still pending. */
void reg_file_discard(reg_staged *st);
/* *removed: the file existed. Syncs the directory. */
int reg_file_remove(const char *path, bool *removed, reg_error *e);

/* ---- the registry and its tools (core.c, tool.c) ------------------------ */

typedef struct reg_lock_entry reg_lock_entry;

struct registry {
    char agents_dir[PATH_MAX]; /* ~/Library/LaunchAgents */
    char units_dir[PATH_MAX];  /* $XDG_CONFIG_HOME/systemd/user */
    char runtime_dir[PATH_MAX];
    char linger_dir[PATH_MAX];
    char user[256];
    uid_t uid;
    /* absolute paths, "" when not on PATH; fixed after registry_new */
    char launchctl[PATH_MAX];
    char plutil[PATH_MAX];
    char systemctl[PATH_MAX];
    char loginctl[PATH_MAX];
    unsigned gone_wait_ms; /* registry_config's, else REG_GONE_WAIT_MS */
    /* the label lock table (labels.c) */
    pthread_mutex_t locks_mu;
    pthread_cond_t locks_cv;
    reg_lock_entry *locks;
};

/* How one operation runs its tools: a WRITE ignores its caller and ends at
 * deadline_ns (its own timeout), or when cancel_fd fires (tkd stops it past
 * its shutdown grace); a READ also ends when cancel_fd fires (its caller).
 * call (NULL for tkd install) is told each tool's process group. */
typedef struct reg_ctx {
    registry *r;
    proc_kind kind;
    int cancel_fd;
    int64_t deadline_ns;
    rpc_call *call;
} reg_ctx;

/* How a tool ran. */
typedef struct reg_out {
    int exit; /* the exit status; -1 when a signal ended it */
    char *out;
    char *err;
} reg_out;

/* Runs tool (an absolute path) with argv (argv[0] its name). extra_env:
 * "K=V" entries or NULL. Returns 0 when it ran to its end (whatever its
 * status), -1 (e filled) when it could not start, timed out, or the call
 * must stop. */
int reg_run(reg_out *o, const reg_ctx *c, const char *tool,
            const char *const *argv, const char *const *extra_env,
            reg_error *e);
void reg_out_free(reg_out *o);
/* What the tool said, for an error: stderr, else stdout, trimmed. */
const char *reg_out_text(const reg_out *o);
/* Copies what the tool said into e->output. */
void reg_keep_output(reg_error *e, const reg_out *o);
/* Sleeps ms, or fails (stopped) when that would pass the deadline. */
int reg_sleep_ms(const reg_ctx *c, unsigned ms, reg_error *e);
/* Finds name on path into out ("" when absent). */
void reg_find_tool(char *out, size_t len, const char *name, const char *path);

/* ---- the label locks (labels.c) ---------------------------------------- */

void reg_locks_init(registry *r);
void reg_locks_destroy(registry *r);
/* Waits until no other operation holds label, up to deadline_ns. */
int reg_label_lock(registry *r, const char *label, int64_t deadline_ns,
                   reg_error *e);
void reg_label_unlock(registry *r, const char *label);

/* ---- the backends (launchd.c, systemd.c) ------------------------------- */

typedef enum reg_action {
    REG_UNCHANGED = 1,
    REG_INSTALLED = 2,
    REG_UPDATED = 3,
} reg_action;

typedef struct reg_result {
    reg_action action;
    unsigned attempts;
    char warnings[REG_MAX_WARNINGS][512];
    size_t n_warnings;
} reg_result;

void reg_warn(reg_result *res, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

typedef struct reg_status {
    bool installed;
    bool up_to_date;
    bool loaded;
    int pid;
    bool exited; /* the fields below are set */
    int exit_code;
    int exit_signal;
} reg_status;

/* What the manager has of a label, as one backend reads it. */
typedef struct reg_loaded {
    bool loaded;     /* launchd: in the domain; systemd: enabled */
    bool in_effect;  /* the installed file is what the manager runs:
                        launchd: loaded; systemd: enabled, no reload
                        pending, not failed */
    bool file_fresh; /* the manager has read the file as it is now */
} reg_loaded;

/* One backend. def is the rendered definition; path where it goes. */
typedef struct reg_backend_ops {
    reg_backend kind;
    const char *name;   /* "launchd" */
    const char *suffix; /* ".plist" */
    void (*render)(reg_buf *out, const reg_spec *s);
    const char *(*dir)(const registry *r);
    /* Register once the definition is rendered and the label locked. */
    int (*apply)(const reg_ctx *c, const reg_spec *s, const char *path,
                 const reg_buf *def, reg_result *res, reg_error *e);
    int (*unregister)(const reg_ctx *c, const char *label, const char *path,
                      bool *removed, bool *unloaded, reg_error *e);
    int (*status)(const reg_ctx *c, const char *label, reg_status *st,
                  reg_loaded *ld, reg_error *e);
} reg_backend_ops;

extern const reg_backend_ops reg_launchd_ops;
extern const reg_backend_ops reg_systemd_ops;

/* ---- the operations (core.c), for the handlers and the CLI ------------- */

/* The backend for a request's value (AUTO: this platform's), or NULL with
 * INVALID_ARGUMENT in e. */
const reg_backend_ops *reg_backend_for(int kind, reg_error *e);
/* dir/label+suffix into out. */
int reg_def_path(char *out, size_t len, const registry *r,
                 const reg_backend_ops *ops, const char *label, reg_error *e);
int reg_op_register(const reg_ctx *c, const reg_backend_ops *ops,
                    const reg_spec *s, reg_result *res, reg_error *e);
int reg_op_unregister(const reg_ctx *c, const reg_backend_ops *ops,
                      const char *label, bool *removed, bool *unloaded,
                      reg_error *e);
/* spec may be NULL (see ServiceStatusReply.up_to_date). */
int reg_op_status(const reg_ctx *c, const reg_backend_ops *ops,
                  const char *label, const reg_spec *spec, reg_status *st,
                  reg_error *e);

/* The Register method's own timeout; tkd install uses it too. */
#define REG_WRITE_TIMEOUT_MS 120000u

#endif /* TK_SERVICE_REGISTRY_INT_H */
