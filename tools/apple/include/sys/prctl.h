/* SPDX-License-Identifier: MIT */
/* Linux only: prctl(2) (PR_SET_CHILD_SUBREAPER, PR_SET_PDEATHSIG, ...) has no
 * macOS equivalent. For tools/apple/check only. */
#error                                                                         \
    "Linux only: <sys/prctl.h> is not on macOS: prctl(2) (PR_SET_CHILD_SUBREAPER, PR_SET_PDEATHSIG, ...) has no macOS equivalent"
