#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fails when gen/ is not exactly what tools/regen makes of proto/, or
# client/ts/dist/src and dist/gen what tsc makes of client/ts/src and gen/ts:
# a .proto or .ts edited without regenerating, or a hand edit in generated
# code. (Python
# leaves __pycache__ in gen/python when the client runs from a checkout.)
set -euo pipefail
top=${1:?source root}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$top/tools/regen" --out "$out"
if ! diff -r "$top/gen/c" "$out/c" >"$out/c.diff" ||
    ! diff -r "$top/gen/tkd" "$out/tkd" >"$out/tkd.diff" ||
    ! diff -r -x __pycache__ "$top/gen/python" "$out/python" >"$out/py.diff" ||
    ! diff -r "$top/gen/ts" "$out/ts" >"$out/ts.diff" ||
    ! diff -r "$top/client/ts/dist/src" "$out/ts-dist/src" >"$out/dist.diff" ||
    ! diff -r "$top/client/ts/dist/gen" "$out/ts-dist/gen" >>"$out/dist.diff"; then
    cat "$out/c.diff" "$out/tkd.diff" "$out/py.diff" "$out/ts.diff" "$out/dist.diff" 2>/dev/null | head -50
    echo "gen/ or client/ts/dist differs from tools/regen output: run tools/regen and commit" >&2
    exit 1
fi
