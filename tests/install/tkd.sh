# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# Sourced by the install tests (check.sh, two_nngs.sh, client-only.sh,
# npm.sh): one way to start tkd and wait for it.
#
# start_tkd LOG COMMAND...: runs COMMAND (a tkd and its options) with its
# log on fd 3; its "listening on" line says the socket exists (as
# tests/conformance/wire.sh waits for it). The read ends at that line, at
# EOF (tkd exited) or after 20 s of silence; then a copy drains the rest
# into LOG, so tkd never blocks on a full pipe. Sets tkd_pid; if tkd did
# not start, prints its log on stderr and returns 1.
start_tkd() {
    local log=$1 line up=no
    shift
    exec 3< <(exec "$@" 2>&1)
    # shellcheck disable=SC2034 # the sourcing script kills it
    tkd_pid=$!
    while IFS= read -r -t 20 -u 3 line; do
        printf '%s\n' "$line" >>"$log"
        case $line in *"listening on"*) up=yes; break ;; esac
    done
    if [ "$up" != yes ]; then
        cat "$log" >&2
        return 1
    fi
    cat <&3 >>"$log" &
    exec 3<&-
}
