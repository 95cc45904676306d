/* SPDX-License-Identifier: MIT */
/*
 * services — tk.v1.Services: programs registered as launchd agents
 * (macOS) or systemd user units (Linux), tkd itself included.
 *
 * Owns: validating a ServiceSpec (a bad one names its field); rendering
 * it, byte for byte deterministically, to a launchd plist or a systemd
 * unit; comparing that with what is installed and acting only on a
 * difference; installing atomically (a temporary file in the same
 * directory, fsync, 0644, rename, fsync of the directory); the launchd
 * backend (plutil -lint where plutil exists, bootout, polling `launchctl
 * print` until the label has left the domain, enable, bootstrap with a
 * bounded linear backoff on "Input/output error" only); the systemd
 * backend (daemon-reload, enable, restart, the linger check); the
 * per-label lock that runs Registers of one label one after the other;
 * the paths of launchctl, plutil, systemctl and loginctl, resolved once
 * on tkd's PATH; and `tkd install` / `tkd uninstall`.
 * May call: tool/ (every one of those tools runs through it, and a run
 * that does not end by itself gets its one answer), proc/ (to find the
 * tools; the types of a run), rpc.h (the call handle, status codes, the
 * method table), libc.
 * Must never: start a program except through tool/ (no fork, exec,
 * system, popen, no shell); retry anything but a bootstrap that failed
 * with "Input/output error", and that at most 6 times; run a mutating
 * command when the rendered definition is installed and in effect (a
 * second Register with the same spec only reads); write outside its
 * LaunchAgents or systemd user directory; let a caller's cancel stop a
 * Register or Unregister once started (they are WRITEs, bounded by their
 * own timeout).
 */
#ifndef TK_SERVICE_SERVICES_H
#define TK_SERVICE_SERVICES_H

#include <stddef.h>

#include "rpc/rpc.h"

typedef struct services services;

/* Where definitions go and where the tools are. NULL fields: from the
 * environment when services_new runs (call it before threads start). */
typedef struct services_config {
    const char *home;        /* $HOME; LaunchAgents: home/Library/... */
    const char *config_home; /* $XDG_CONFIG_HOME, else home/.config; units:
                                config_home/systemd/user */
    const char *runtime_dir; /* $XDG_RUNTIME_DIR: where systemctl --user
                                finds the user manager */
    const char *path;        /* $PATH: launchctl, plutil, systemctl and
                                loginctl are looked up here, once */
    const char *linger_dir;  /* /var/lib/systemd/linger: read when loginctl
                                cannot say whether the user lingers */
    unsigned gone_wait_ms;   /* how long launchd may take to tear a job
                                down after bootout; 0: 10 s. For the tests,
                                which reach the bound without waiting 10 s */
} services_config;

/* Resolves the directories and the tools. Fails only without memory;
 * without a home directory (HOME, else the password database's) the
 * operations answer FAILED_PRECONDITION, NO_HOME. */
int services_new(services **out, const services_config *cfg, char *err,
                 size_t errlen);
/* NULL is accepted. No call may be running. */
void services_free(services *r);

/* Adds tk.v1.Services (Render, Register, Unregister, Status) to srv; r
 * must outlive it. */
int services_register(services *r, rpc_server *srv, char *err, size_t errlen);

/* `tkd install [--backend B] [--label L] [-- TKD-OPTION...]` and `tkd
 * uninstall [--backend B] [--label L]`: registers (or removes) tkd itself,
 * its own executable with the options after "--", through the same code as
 * Register. When argv[1] is "install" or "uninstall", runs it, prints what
 * happened and returns the exit status (0, 1 failed, 2 usage); otherwise
 * returns -1 and does nothing. */
int services_cli(int argc, char **argv);

#endif /* TK_SERVICE_SERVICES_H */
