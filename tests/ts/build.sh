#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds client/ts (tsc into client/ts/dist) for the meson tests that run
# it, and touches the stamp meson asks for. Without node or without
# client/ts/node_modules it builds nothing and says so: the tests
# (tests/ts/check.sh, conformance-ts) then fail, saying what to run.
set -euo pipefail
dir=${1:?client/ts}
stamp=${2:?stamp}
if command -v node >/dev/null && [ -x "$dir/node_modules/.bin/tsc" ]; then
    node "$dir/node_modules/typescript/bin/tsc" -p "$dir"
else
    echo "ts-build: not built: run npm ci in $dir (npm ci --prefix client/ts)" >&2
fi
touch "$stamp"
