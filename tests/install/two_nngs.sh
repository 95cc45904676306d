#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A program linked with libtkclient and the system's libnng (two_nngs.c)
# calls through each: REQ/REP over the system's NNG, a Ping through
# libtkclient to a tkd this script starts, and its nng_ names resolve in
# libnng.so.1, not in libtkclient.
#
# two_nngs.sh PROGRAM TKD: PROGRAM passes.
# two_nngs.sh --control PROGRAM TKD: PROGRAM is linked with a libtkclient
# whose NNG's names are public (the .so without client/lib/libtkclient.map,
# or the archive of its objects and tk's libnng.a); it must fail, saying
# that nng_version resolves elsewhere than libnng.so.1: the check sees it.
set -euo pipefail
control=no
if [ "${1:-}" = --control ]; then control=yes; shift; fi
program=${1:?two_nngs program}
tkd=${2:?tkd}
dir=$(mktemp -d)
tkd_pid=
trap 'kill "$tkd_pid" 2>/dev/null || true; rm -rf "$dir"' EXIT

mkdir -m 700 "$dir/run"
# shellcheck source=tests/install/tkd.sh
source "$(dirname "$0")/tkd.sh"
start_tkd "$dir/tkd.log" "$tkd" --listen "ipc://$dir/run/tkd.sock" ||
    { echo "two-nngs: tkd did not start (its log above)" >&2; exit 1; }

status=0
TK_ADDR="ipc://$dir/run/tkd.sock" "$program" >"$dir/out" 2>"$dir/err" || status=$?
cat "$dir/out"
if [ $control = yes ]; then
    if [ $status = 1 ] && grep -q "resolves in .*, not the system's libnng.so.1" "$dir/err"; then
        echo "two-nngs (control): failed as expected: $(cat "$dir/err")"
        exit 0
    fi
    echo "two-nngs (control): exit $status against a libtkclient whose NNG is public, not 1 for nng_version outside libnng.so.1; stderr:" >&2
    cat "$dir/err" >&2
    exit 1
fi
cat "$dir/err" >&2
exit $status
