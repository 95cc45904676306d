#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tools/run's command line, without building or starting anything: an
# unknown option or a bad --root is refused before any step runs (exit 2,
# saying what to do), --help says the options, and --dry-run shows the
# tkd it would start (each --root absolute, the checkout always one, and
# the main checkout of a linked worktree) and the export line it would end
# with, which makes `tkcall` the checkout's, TK_ADDR tkd's socket and
# MANPATH the man pages', and sources the completion; --stop --clean
# --dry-run says it would remove the PostgreSQL cluster's directory.
# (tests/conformance/readme.sh runs tools/run itself.)
set -euo pipefail
src=$(cd "${1:?source root}" && pwd)
run="$src/tools/run"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
    echo "run.sh: $*" >&2
    exit 1
}

# Refused: exit 2, a message naming the problem, nothing on stdout (no
# step began: "tools/run: checking ..." would be there).
refused() {
    local want=$1
    shift
    local rc=0
    "$run" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
    [ "$rc" = 2 ] || fail "tools/run $* exited $rc, want 2; stderr: $(cat "$tmp/err")"
    [ ! -s "$tmp/out" ] || fail "tools/run $* began: $(cat "$tmp/out")"
    grep -qF -- "$want" "$tmp/err" || fail "tools/run $*: \"$want\" not in: $(cat "$tmp/err")"
}
refused 'unknown option "--stpo"' --stpo
refused 'unknown option "stop"' stop
refused 'unknown option "--dry-run-x"' --dry-run-x
refused '--root needs a directory' --root
refused '--root needs a directory' --root=
refused "--root $tmp/nowhere: no such directory" --root "$tmp/nowhere"
refused '--stop takes no --root' --stop --root "$tmp"
refused 'unknown option "--bogus"' --root "$tmp" --bogus
refused '--clean goes with --stop' --clean

"$run" --help >"$tmp/out"
for opt in --root --dry-run --stop --clean --help; do
    grep -qF -- "$opt" "$tmp/out" || fail "--help does not say $opt"
done

mkdir "$tmp/a" "$tmp/b"
abs=$(cd "$tmp" && pwd -P)
top=$(cd "$src" && pwd -P)
(cd "$tmp" && "$run" --dry-run --root a --root="$tmp/b" --root a) >"$tmp/out"
main=$(git -C "$src" rev-parse --path-format=absolute --git-common-dir 2>/dev/null || true)
case $main in "$top/.git" | "") main= ;; *) main=${main%/.git} ;; esac
want="--root $top --root $abs/a --root $abs/b${main:+ --root $main}"
case $(sed -n 2p "$tmp/out") in
    *" $want") ;;
    *) fail "--dry-run does not start tkd with the roots given ($want): $(cat "$tmp/out")" ;;
esac
line=$(tail -1 "$tmp/out")
case $line in export\ TK_ADDR=ipc://*) ;; *) fail "the last line is not the export: $line" ;; esac
# Its last command sources a file tools/run writes after building.
export_part=${line%%; source *}
[ "$export_part" != "$line" ] || fail "the export line sources no completion: $line"
# shellcheck disable=SC2016 # $TK_ADDR is the inner shell's, after the export
addr=$(env -i HOME="$tmp" PATH=/usr/bin:/bin bash -c "$export_part"'; echo "$TK_ADDR"')
case $addr in ipc:///*/tkd.sock) ;; *) fail "the export sets TK_ADDR=$addr" ;; esac
tkcall_dir=$(printf '%s' "$line" | sed -E 's/.* PATH=([^:]*):.*/\1/')
[ "$tkcall_dir" = "$top/build/dev/client" ] || fail "the export puts $tkcall_dir first on PATH, not $top/build/dev/client"
# shellcheck disable=SC2016 # $MANPATH is the inner shell's
manpath=$(env -i HOME="$tmp" PATH=/usr/bin:/bin bash -c "$export_part"'; echo "$MANPATH"')
case $manpath in /*/man:) ;; *) fail "the export sets MANPATH=$manpath" ;; esac
"$run" --stop --clean --dry-run >"$tmp/out"
grep -q '^tools/run: and remove /tmp/tk-run-pg-' "$tmp/out" ||
    fail "--stop --clean --dry-run does not say it removes the cluster: $(cat "$tmp/out")"
"$run" --stop --dry-run >"$tmp/out"
! grep -q 'remove' "$tmp/out" || fail "--stop --dry-run says it removes: $(cat "$tmp/out")"
echo "run.sh: ok"
