/* SPDX-License-Identifier: MIT */
/* SIGINT/SIGTERM: orderly shutdown on the first, immediate exit on the
 * second. The signals are blocked in every thread and taken with sigwait,
 * so no handler runs in an arbitrary thread's context. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "rpc_int.h"

static void stop_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
}

int rpc_block_stop_signals(void)
{
    sigset_t set;
    stop_signals(&set);
    return -pthread_sigmask(SIG_BLOCK, &set, NULL);
}

/* Waits for the second signal while the first one's shutdown runs. */
static void *second_signal(void *arg)
{
    (void)arg;
    sigset_t set;
    stop_signals(&set);
    int sig;
    if (sigwait(&set, &sig) == 0) {
        /* In JSON a line of the log like every other, given half a
         * second to be written; in text the bare line, written now. */
        if (obs_log_get_format() == OBS_LOG_JSON) {
            const obs_field f[] = { OBS_INT("signal", sig) };
            obs_log_fields(OBS_LOG_WARN, f, 1,
                           "tkd: second signal, exiting now");
            obs_log_flush(500);
            _exit(130);
        }
        static const char msg[] = "tkd: second signal, exiting now\n";
        ssize_t n = write(STDERR_FILENO, msg, sizeof msg - 1);
        (void)n;
        _exit(130);
    }
    return NULL;
}

int rpc_serve_until_signal(rpc_server *srv)
{
    sigset_t set;
    stop_signals(&set);
    int sig = 0;
    int rv = sigwait(&set, &sig);
    if (rv != 0)
        return -rv;
    const char *abbrev = port_signal_name(sig);
    char name[16];
    snprintf(name, sizeof name, "SIG%s", abbrev != NULL ? abbrev : "?");
    const obs_field sf[] = { OBS_INT("signal", sig),
                             OBS_STR("signal_name", name) };
    obs_log_fields(OBS_LOG_INFO, sf, 2, "signal %d: shutting down", sig);
    pthread_t t;
    if (pthread_create(&t, NULL, second_signal, NULL) == 0)
        pthread_detach(t);
    rpc_server__on_stop(srv);
    unsigned outlived = rpc_server_shutdown(srv);
    const obs_field f[] = { OBS_INT("outlived", outlived) };
    if (outlived == 0)
        obs_log_fields(OBS_LOG_INFO, f, 1, "shutdown complete");
    else
        obs_log_fields(OBS_LOG_WARN, f, 1,
                       "shutdown complete, not clean: %u call(s) outlived the "
                       "grace",
                       outlived);
    return outlived > INT_MAX ? INT_MAX : (int)outlived;
}
