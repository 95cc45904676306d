#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The README's client examples that are not C (tests/install/check.sh runs
# the C block): the tkcall, Python and TypeScript examples of README.md and
# the "From any other language" shell block of docs/contract.md, extracted
# and run exactly as written, from a directory laid out as a clone (proto/, client/, gen/),
# against a real tkd on its default socket under a private XDG_RUNTIME_DIR. The tkcall
# example's and the shell block's output must be the one shown (elapsed
# time and uptime aside). Then tools/run itself, on this build: the
# commands README names (tools/run --help, --dry-run, tools/install-deps
# --list) succeed, every call tools/run shows runs as shown after its
# export line (the first one printing what tools/run printed under it),
# the export line finds `man tkcall` and loads the completion in bash and
# zsh, docs/search.md's calls print what it shows, and tools/run --stop
# --clean stops tkd and removes the PostgreSQL cluster's directory.
#   readme.sh SOURCE_ROOT BUILD_ROOT  (TKD: the tkd to start, TKCALL: the tkcall)
set -euo pipefail
src=${1:?source root}
build=${2:?build root}
tkd=${TKD:?TKD: the tkd to test}
tkcall=${TKCALL:?TKCALL: the tkcall to test}
# nngcat is nng's tool (Debian: nng-utils; Homebrew's nng builds it, an
# NNG that ships no tools does not): without it this test cannot run, and
# says so as meson's skip (77).
if ! command -v nngcat >/dev/null; then
    echo "readme: SKIP: no nngcat on PATH (NNG's command line tool) to send the request" >&2
    exit 77
fi
for tool in protoc od /usr/bin/python3; do
    command -v "$tool" >/dev/null || { echo "readme: $tool not found" >&2; exit 1; }
done
fail() { echo "readme: $*" >&2; exit 1; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/tk-readme-XXXXXX")
tkd_pid=
run_state=
stop_run() { TK_RUN_BUILD=$build TK_RUN_STATE=$run_state "$src/tools/run" --stop --clean; }
trap '[ -z "$tkd_pid" ] || kill "$tkd_pid" 2>/dev/null || true
      [ -z "$run_state" ] || stop_run >/dev/null || true; rm -rf "$dir"' EXIT
work="$dir/clone"
mkdir "$work" "$dir/run" "$dir/empty"
chmod 700 "$dir/run" "$dir/empty"
for d in proto client gen; do ln -s "$src/$d" "$work/$d"; done
# No __pycache__ in the checkout (the generated Python is compared byte for
# byte).
export PYTHONDONTWRITEBYTECODE=1
unset TK_ADDR

# A fenced block of FILE: the first one opening with FENCE after the line
# that starts with HEADING.
block() { # block FILE HEADING FENCE
    awk -v h="$2" -v f="$3" '
        index($0, h) == 1 { sec = 1 }
        sec && !on && $0 == f { on = 1; next }
        on && /^```$/ { exit }
        on' "$src/$1"
}
block README.md '### Python' '```python' >"$work/app.py"
grep -q 'client.control.ping' "$work/app.py" || fail "README has no Python example"
block README.md '### TypeScript' '```js' >"$work/app.mjs"
grep -q 'client.control.ping' "$work/app.mjs" || fail "README has no TypeScript example"
command -v node >/dev/null || fail "node not found (the TypeScript example): tools/install-deps"
[ -f "$src/client/ts/dist/src/index.js" ] ||
    fail "client/ts is not built: npm ci --prefix client/ts (tools/install-deps)"
# The tkcall example: one command (after "$ "), then what it prints.
block README.md '### tkcall' '```sh' >"$dir/tkcall.txt"
[ "$(grep -c '^\$ ' "$dir/tkcall.txt")" = 1 ] || fail "README's tkcall example is not one command"
grep -q '^\$ tkcall ' "$dir/tkcall.txt" || fail "README has no tkcall example"
run_tkcall=$(sed -n 's/^\$ //p' "$dir/tkcall.txt")
sed '/^\$ /d' "$dir/tkcall.txt" >"$dir/tkcall-shown.txt"
block docs/contract.md '## From any other language' '```sh' >"$work/call.sh"
grep -q 'nngcat' "$work/call.sh" || fail "docs/contract.md has no shell example"
# The output docs/contract.md shows: the block after the shell block.
awk 'index($0, "## From any other language") == 1 { sec = 1 }
     sec && /^```/ { n++; if (n == 3) { on = 1; next } }
     on && /^```$/ { exit }
     on' "$src/docs/contract.md" >"$dir/shown.txt"
grep -q '^call_id: ' "$dir/shown.txt" || fail "docs/contract.md shows no reply of the shell example"
# The python example says how to run it (its first line, a comment).
run_py=$(sed -n '1s/^# //p' "$work/app.py")
case $run_py in *" app.py") ;; *) fail "the Python example's first line is not how to run it: $run_py" ;; esac

# Without a tkd the Python example takes its except branch.
# shellcheck disable=SC2086 # run_py is words: VAR=value... program file
out=$(cd "$work" && XDG_RUNTIME_DIR="$dir/empty" env $run_py)
echo "$out"
case $out in "UNAVAILABLE "*" NONE") ;; *) fail "without tkd the Python example printed: $out" ;; esac

# tkd on its default socket ($XDG_RUNTIME_DIR/tk/tkd.sock), its log on fd 3;
# its first "listening on" line says the socket exists.
export XDG_RUNTIME_DIR="$dir/run"
exec 3< <(exec "$tkd" --log-level info 2>&1)
tkd_pid=$!
up=no
while IFS= read -r -t 20 -u 3 line; do
    case $line in *"listening on"*) up=yes; break ;; esac
done
[ "$up" = yes ] || fail "tkd did not start"

# shellcheck disable=SC2086
out=$(cd "$work" && env $run_py)
echo "$out"
[[ $out =~ ^tkd\ [^\ ]+,\ up\ [0-9]+\ ms$ ]] || fail "the Python example printed: $out"

# The TypeScript example, as its first line says to run it.
run_js=$(sed -n '1s|^// app.mjs: ||p' "$work/app.mjs")
[ "$run_js" = "node app.mjs" ] || fail "the TypeScript example's first line is not how to run it: $run_js"
out=$(cd "$work" && node app.mjs)
echo "$out"
[[ $out =~ ^tkd\ [^\ ]+,\ up\ [0-9]+\ ms$ ]] || fail "the TypeScript example printed: $out"

# tkcall as tools/run's export line puts it: on PATH.
mkdir "$dir/bin"
ln -s "$tkcall" "$dir/bin/tkcall"
out=$(cd "$work" && PATH="$dir/bin:$PATH" bash -euo pipefail -c "$run_tkcall")
echo "$out"
# What varies between runs: tkd's uptime.
no_uptime() { sed 's/^\(  "uptimeMs": "\)[0-9]*"/\1N"/'; }
diff <(no_uptime <"$dir/tkcall-shown.txt") <(no_uptime <<<"$out") ||
    fail "the tkcall example's reply is not the one the README shows (diff above: README, then this tkd)"

# TK_ADDR as tools/run's export line sets it, this tkd's socket; and
# XDG_RUNTIME_DIR as after tools/run, not where tkd is.
addr="ipc://$XDG_RUNTIME_DIR/tk/tkd.sock"
out=$(cd "$work" && TK_ADDR=$addr XDG_RUNTIME_DIR="$dir/empty" bash -euo pipefail call.sh) || fail "docs/contract.md's shell block failed: $out"
echo "$out"
# What varies between runs: the server's elapsed time, and the PingReply's
# uptime (field 3, tag \030, left out when 0).
norm() { sed -e 's/^\(  elapsed_us: \)[0-9]*$/\1N/' -e 's/\\030[^"]*"$/"/'; }
diff <(norm <"$dir/shown.txt") <(norm <<<"$out") ||
    fail "the shell example's reply is not the one docs/contract.md shows (diff above: docs/contract.md, then this tkd)"
# ---- tools/run, and every command it and README show ----
kill "$tkd_pid"
tkd_pid=
unset XDG_RUNTIME_DIR TK_PG_DSN MANPATH
mkdir "$dir/home"
(cd "$src" && tools/run --help && tools/run --dry-run && tools/install-deps --list) >/dev/null ||
    fail "a command README names (tools/run --help, tools/run --dry-run, tools/install-deps --list) failed"
run_state="$dir/state"
export TK_RUN_BUILD=$build TK_RUN_STATE=$run_state
(cd "$src" && tools/run) >"$dir/run.txt" 2>&1 || { cat "$dir/run.txt"; fail "tools/run failed"; }
cat "$dir/run.txt"
line=$(tail -1 "$dir/run.txt")
case $line in "export TK_ADDR="*) ;; *) fail "tools/run's last line is not the export: $line" ;; esac
# In the checkout, in a shell that ran the export line (and nothing else
# of this test's environment: no TK_ADDR, no MANPATH), as a user would.
in_shell() { # in_shell SHELL COMMAND
    (cd "$src" && HOME="$dir/home" "$1" -c "$line"$'\n'"$2")
}
# The first call: one "$ " line, and under it (to the blank line) its reply.
[ "$(grep -c '^\$ ' "$dir/run.txt")" = 1 ] || fail "tools/run shows other than one command after \$"
first=$(sed -n 's/^\$ //p' "$dir/run.txt")
awk 'on && $0 == "" { exit } on; /^\$ / { on = 1 }' "$dir/run.txt" >"$dir/first-shown.txt"
out=$(in_shell bash "$first")
diff <(no_uptime <"$dir/first-shown.txt") <(no_uptime <<<"$out") ||
    fail "\"$first\", pasted after the export line, prints other than tools/run showed (diff above)"
# "More calls": each line indented under it, to "Stop it:", in order.
sed -n '/^More calls/,/^Stop it:/s/^  //p' "$dir/run.txt" >"$dir/calls.txt"
[ "$(wc -l <"$dir/calls.txt")" -ge 5 ] || fail "tools/run shows no more calls"
while IFS= read -r call; do
    in_shell bash "$call" >"$dir/call.out" 2>&1 ||
        fail "\"$call\", as tools/run shows it, failed: $(cat "$dir/call.out")"
    echo "ran: $call"
done <"$dir/calls.txt"
# The export line's man pages and completion.
page=$(in_shell bash "man -w tkcall") || fail "after the export line man -w tkcall finds nothing"
[ "$(readlink -f "$page")" = "$(readlink -f "$build/tkcall.1")" ] || fail "man -w tkcall: $page, not this build's"
in_shell bash "man -w 8 tkd" >/dev/null || fail "after the export line man -w 8 tkd finds nothing"
[ "$(in_shell bash "complete -p tkcall")" = "complete -F _tkcall tkcall" ] ||
    fail "after the export line bash has no completion of tkcall"
if command -v zsh >/dev/null; then
    # shellcheck disable=SC2016 # zsh's $_comps, in zsh
    [ "$(in_shell zsh 'print -r -- $_comps[tkcall]')" = _tkcall ] ||
        fail "after the export line zsh has no completion of tkcall"
fi
# docs/search.md's calls, in this checkout, print what it shows (the time
# the tool took aside).
block docs/search.md '# Search' '```sh' >"$dir/search.txt"
grep -q '^\$ tkcall ' "$dir/search.txt" || fail "docs/search.md has no tkcall example"
no_ms() { sed 's/^\( *"toolMs": \)[0-9]*$/\1N/'; }
while IFS= read -r call; do
    awk -v c="$call" 'on && /^\$ / { exit } on; $0 == "$ " c { on = 1 }' "$dir/search.txt" >"$dir/search-shown.txt"
    out=$(in_shell bash "$call 2>&1") || fail "\"$call\", as docs/search.md shows it, failed: $out"
    diff <(no_ms <"$dir/search-shown.txt") <(no_ms <<<"$out") ||
        fail "\"$call\" prints other than docs/search.md shows (diff above: docs/search.md, then this tkd)"
    echo "ran: $call"
done < <(sed -n 's/^\$ //p' "$dir/search.txt")
# --stop --clean: tkd gone, and the cluster's directory.
pgdir=$(sed -n 's/^tk.v1.Orders uses a private PostgreSQL in //p' "$dir/run.txt")
[ -d "$pgdir" ] || fail "tools/run says its PostgreSQL is in \"$pgdir\", not a directory"
pid=$(cat "$run_state/tkd.pid")
(cd "$src" && tools/run --stop --clean) || fail "tools/run --stop --clean failed"
run_state=
[ ! -e "$pgdir" ] || fail "tools/run --stop --clean left $pgdir"
for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
! kill -0 "$pid" 2>/dev/null || fail "tools/run --stop --clean left tkd $pid running"
echo "readme: ok"
