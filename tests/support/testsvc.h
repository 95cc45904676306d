/* SPDX-License-Identifier: MIT */
/*
 * tk.test.Test: methods that exist only in tests, registered through the
 * same method-table API as every service (tkd ships none of them).
 *   Wait       READ: blocks until cancelled or past its deadline, then
 *              answers as every READ must (CANCELLED / DEADLINE_EXCEEDED /
 *              UNAVAILABLE with the cause).
 *   Capped     Wait with a ceiling (and default) of 300 ms.
 *   Timeout    READ: answers at once with the timeout in force, in ms, as
 *              decimal text in PingReply.data (default 7000 ms, ceiling
 *              UINT32_MAX: the caller's timeout_ms as the server took it).
 *   SlowWrite  WRITE: ignores cancellation; finishes when released
 *              (use_release: in process, or testd --release-writes, where
 *              SIGUSR1 releases) or else after PingRequest.data ms.
 *   Commit     READ with a write inside (in process only): passes its
 *              commit point when released, finishes when released again;
 *              announces "Commit" and then "Committing".
 *   Late       READ: once cancelled or past its deadline, announces "Late"
 *              and holds its answer until released (testd: SIGUSR1), then
 *              answers as Wait does: a reply later than any client grace.
 * Both announce that they started: a semaphore post in process, and a line
 * "ENTERED <method>" on stdout when announce_stdout is set (testd).
 */
#ifndef TK_TESTS_TESTSVC_H
#define TK_TESTS_TESTSVC_H

#include <stdatomic.h>
#include <stdbool.h>

#include "rpc/rpc.h"
#include "tsem.h"

typedef struct testsvc {
    _Atomic int wait_runs;
    _Atomic int write_runs;
    ts_sem entered;         /* posted when a handler starts */
    ts_sem exited;          /* posted when Wait returns */
    _Atomic int last_cause; /* the rpc_cause Wait stopped for */
    ts_sem release; /* Late, Commit, and SlowWrite when use_release, wait */
    bool use_release;
    bool announce_stdout;
} testsvc;

void testsvc_init(testsvc *t);
void testsvc_destroy(testsvc *t);
int testsvc_register(testsvc *t, rpc_server *srv);

#endif
