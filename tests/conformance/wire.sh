#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The wire protocol without any tk client: a tk.v1.Request encoded by
# `protoc --encode` (its payload a PingRequest, itself encoded by protoc),
# sent by `nngcat --req` (nng-utils), the tk.v1.Reply decoded by
# `protoc --decode` — what a user of any other language does first (the
# docs/contract.md shows it). Against a real tkd, waited for by its log line.
#   wire.sh SOURCE_ROOT       (TKD: the tkd to start)
set -euo pipefail
top=${1:?source root}
tkd=${TKD:?TKD: the tkd to test}
# nngcat is nng's tool (Debian: nng-utils; Homebrew's nng builds it, an
# NNG that ships no tools does not): without it this test cannot run, and
# says so as meson's skip (77).
if ! command -v nngcat >/dev/null; then
    echo "wire: SKIP: no nngcat on PATH (NNG's command line tool) to send the request" >&2
    exit 77
fi
for tool in protoc od; do
    command -v "$tool" >/dev/null || { echo "wire: $tool not found" >&2; exit 1; }
done

dir=$(mktemp -d "${TMPDIR:-/tmp}/tk-wire-XXXXXX")
url="ipc://$dir/tkd.sock"
# tkd's log on fd 3; its first "listening on" line says the socket exists.
exec 3< <(exec "$tkd" --listen "$url" --log-level info 2>&1)
tkd_pid=$!
trap 'kill "$tkd_pid" 2>/dev/null || true; rm -rf "$dir"' EXIT
up=no
while IFS= read -r -t 20 -u 3 line; do
    case $line in *"listening on"*) up=yes; break ;; esac
done
[ "$up" = yes ] || { echo "wire: tkd did not start" >&2; exit 1; }

proto() { protoc -I "$top/proto" "$@"; }
# Bytes as a protoc text-format string: every byte an octal escape.
as_text() { od -An -v -to1 "$1" | tr -d '\n' | sed 's/ *\([0-7]\{3\}\)/\\\1/g'; }
# A protoc text-format string (what --decode prints for bytes) back to bytes:
# its escapes (\n, \", \\, \NNN octal) are printf's own.
# shellcheck disable=SC2059 # the string is the format, % escaped
from_text() { printf "$(printf '%s' "$1" | sed 's/%/%%/g')"; }
fail() { echo "wire: $*" >&2; exit 1; }

call() { # call REQUEST_TEXT -> the decoded tk.v1.Reply on stdout
    printf '%s\n' "$1" | proto --encode=tk.v1.Request tk/v1/rpc.proto >"$dir/req.bin"
    # One request, one reply. (Not --count 1: nngcat 1.5.2 then computes a
    # negative receive timeout once a millisecond has passed, and fails.)
    nngcat --req --dial "$url" --file "$dir/req.bin" --raw --recv-timeout 10 \
        >"$dir/rep.bin"
    proto --decode=tk.v1.Reply tk/v1/rpc.proto <"$dir/rep.bin"
}

# Ping: a status, OK (proto3 leaves the zero code out), the payload a
# PingReply.
printf 'data: "hello"\n' |
    proto --encode=tk.v1.PingRequest tk/v1/control.proto >"$dir/ping.bin"
reply=$(call "call_id: 7 method: \"tk.v1.Control/Ping\" timeout_ms: 5000
payload: \"$(as_text "$dir/ping.bin")\"")
echo "$reply"
grep -qx 'call_id: 7' <<<"$reply" || fail "no call_id 7 in the reply"
# OK is a status whose code proto3 leaves out, not a missing status: tkd
# always sends one (elapsed_us at least).
grep -qx 'status {' <<<"$reply" || fail "the Ping reply has no status"
! grep -q '^  code:' <<<"$reply" || fail "Ping did not answer OK"
payload=$(sed -n 's/^payload: "\(.*\)"$/\1/p' <<<"$reply")
from_text "$payload" >"$dir/pong.bin"
pong=$(proto --decode=tk.v1.PingReply tk/v1/control.proto <"$dir/pong.bin")
echo "$pong"
grep -qx 'data: "hello"' <<<"$pong" || fail "Ping did not echo its data"
grep -q '^server_version: ' <<<"$pong" || fail "no server_version"

# An unknown method: the structured status, reason included.
reply=$(call 'call_id: 8 method: "tk.v1.Nope/Nothing" timeout_ms: 5000')
echo "$reply"
grep -qx '  code: UNIMPLEMENTED' <<<"$reply" || fail "not UNIMPLEMENTED"
grep -qx '  reason: "UNKNOWN_METHOD"' <<<"$reply" || fail "no reason UNKNOWN_METHOD"
echo "wire: ok"
