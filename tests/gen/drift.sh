#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fails when gen/, the generated files of the Python client's package
# (client/python/tk: v1/, _services.py, _catalog.py, whatever tools/regen
# writes there), and client/ts/dist/src and dist/gen (what tsc makes of
# client/ts/src and gen/ts) are not exactly what tools/regen makes of
# proto/: a .proto or .ts edited without regenerating, or a hand edit in
# generated code. (Python leaves __pycache__ in client/python when the
# client runs from a checkout.)
set -euo pipefail
top=${1:?source root}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$top/tools/regen" --out "$out"
py() {
    local f
    for f in "$out"/python/tk/*; do
        diff -r -x __pycache__ "$top/client/python/tk/${f##*/}" "$f" || return 1
    done
}
if ! diff -r "$top/gen/c" "$out/c" >"$out/c.diff" ||
    ! diff -r "$top/gen/tkd" "$out/tkd" >"$out/tkd.diff" ||
    ! py >"$out/py.diff" 2>&1 ||
    ! diff -r "$top/gen/ts" "$out/ts" >"$out/ts.diff" ||
    ! diff -r "$top/client/ts/dist/src" "$out/ts-dist/src" >"$out/dist.diff" ||
    ! diff -r "$top/client/ts/dist/gen" "$out/ts-dist/gen" >>"$out/dist.diff"; then
    cat "$out/c.diff" "$out/tkd.diff" "$out/py.diff" "$out/ts.diff" "$out/dist.diff" 2>/dev/null | head -50
    echo "gen/, client/python/tk's generated files or client/ts/dist differ from tools/regen output: run tools/regen and commit" >&2
    exit 1
fi
