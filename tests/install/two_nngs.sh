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

# tkd's log on fd 3; its "listening on" line says the socket exists (as
# tests/install/check.sh waits for it). The read ends at that line, at EOF
# (tkd exited) or after 20 s of silence; then a copy drains the rest into
# tkd.log, so tkd never blocks on a full pipe.
mkdir -m 700 "$dir/run"
exec 3< <(exec "$tkd" --listen "ipc://$dir/run/tkd.sock" 2>&1)
tkd_pid=$!
up=no
while IFS= read -r -t 20 -u 3 line; do
    printf '%s\n' "$line" >>"$dir/tkd.log"
    case $line in *"listening on"*) up=yes; break ;; esac
done
if [ "$up" != yes ]; then
    echo "two-nngs: tkd did not start; its log:" >&2
    cat "$dir/tkd.log" >&2
    exit 1
fi
cat <&3 >>"$dir/tkd.log" &
exec 3<&-

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
