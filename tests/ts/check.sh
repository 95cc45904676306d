#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# client/ts's own tests (node --test): fails, saying what to run, when node
# or the installed package is missing; never passes without running them.
set -euo pipefail
dir=${1:?client/ts}
command -v node >/dev/null || {
    echo "ts-client: node is not installed: apt-get install -y nodejs npm (tools/install-deps), then npm ci --prefix client/ts" >&2
    exit 1
}
if [ ! -d "$dir/node_modules" ] || [ ! -f "$dir/dist/test/wire.test.js" ]; then
    echo "ts-client: $dir is not installed and built: run npm ci in $dir (npm ci --prefix client/ts; tools/install-deps does)" >&2
    exit 1
fi
export TK_TS_REQUIRE_SERVERS=1
exec node "$dir/test/run.mjs"
