#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# client/ts as npm installs it, offline, with no TypeScript compiler
# reachable (a tsc first on PATH that fails, saying so, if anything runs
# it), from a clone made of the files git tracks: (1) a folder, linked
# (after npm ci --omit=dev in the clone) and copied (--install-links);
# (2) the tarball npm pack makes. Each time the example of
# client/ts/README.md runs, as written, against a real tkd. (3) npm pack's
# file list is exactly the JavaScript and declarations of src/ and gen/ts,
# README.md, LICENSE and package.json. Negative controls: a prepare script
# running tsc makes the folder install fail; a .map or a test/ file in the
# pack fails the list. client/ts/package-lock.json names no registry URL.
# @bufbuild/protobuf comes from client/ts/node_modules (packed here) and,
# for npm ci, from the npm cache npm ci --prefix client/ts filled.
#   npm.sh SOURCE_ROOT  (TKD: the tkd to start)
set -euo pipefail
src=${1:?source root}
tkd=${TKD:?TKD: the tkd to test}
fail() { echo "npm: $*" >&2; exit 1; }
ts="$src/client/ts"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    fail "node or npm not found: apt-get install -y nodejs npm (tools/install-deps)"
fi
if [ ! -f "$ts/node_modules/typescript/bin/tsc" ] || [ ! -f "$ts/node_modules/@bufbuild/protobuf/package.json" ]; then
    fail "client/ts is not installed: npm ci --prefix client/ts (tools/install-deps)"
fi
if [ ! -e "$src/.git" ]; then
    echo "npm: SKIP: $src is not a git checkout (the clone is made of the files git tracks)" >&2
    exit 77
fi
echo "npm: npm $(npm --version), node $(node --version)"
! grep -n '"resolved"' "$ts/package-lock.json" ||
    fail "client/ts/package-lock.json names where to download (above): npm ci takes it from the registry it is configured with"
cmp -s "$src/LICENSE" "$ts/LICENSE" || fail "client/ts/LICENSE differs from LICENSE: cp LICENSE client/ts/"

user_cache=$(npm config get cache)
dir=$(mktemp -d "${TMPDIR:-/tmp}/tk-npm-XXXXXX")
tkd_pid=
trap '[ -z "$tkd_pid" ] || kill "$tkd_pid" 2>/dev/null || true; rm -rf "$dir"' EXIT
# No registry, no user configuration, a cache of this test's own.
: >"$dir/npmrc"
export npm_config_offline=true npm_config_userconfig="$dir/npmrc" \
    npm_config_cache="$dir/cache" npm_config_logs_dir="$dir/logs" \
    npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false \
    npm_config_loglevel=warn
unset NODE_PATH
mkdir "$dir/bin"
printf '#!/bin/sh\necho "tsc ran at install time: $*" >&2\nexit 1\n' >"$dir/bin/tsc"
chmod +x "$dir/bin/tsc"
export PATH="$dir/bin:$PATH"

# A clone: client/ts, gen/ts and LICENSE as git tracks them (the link gen
# as a link), nothing built or installed.
clone() { # clone DIR
    mkdir -p "$1"
    git -C "$src" ls-files -z -- client/ts gen/ts |
        tar -C "$src" --null -T - -cf - | tar -C "$1" -xf -
}
# A project of the user's, empty.
app() { # app DIR
    mkdir -p "$1"
    printf '{ "name": "app", "version": "1.0.0", "private": true }\n' >"$1/package.json"
}
protobuf_tgz=$(npm pack --ignore-scripts --pack-destination "$dir" "$ts/node_modules/@bufbuild/protobuf" | tail -1)
protobuf_tgz="$dir/$protobuf_tgz"

# The README's example: the fenced js block under "## Example".
awk '/^## Example/ { sec = 1 } sec && !on && $0 == "```js" { on = 1; next }
     on && /^```$/ { exit } on' "$ts/README.md" >"$dir/app.mjs"
[ "$(sed -n 1p "$dir/app.mjs")" = "// app.mjs: node app.mjs" ] ||
    fail "client/ts/README.md's example does not open with how to run it (// app.mjs: node app.mjs)"
grep -q 'from "tk-client"' "$dir/app.mjs" || fail "client/ts/README.md's example does not import tk-client"
example() { # example APPDIR HOW
    cp "$dir/app.mjs" "$1/"
    local out
    out=$(cd "$1" && node app.mjs 2>&1) || fail "$2: the README's example failed: $out"
    echo "$2: $out"
    [[ $out =~ ^tkd\ [^\ ]+\ says\ hello,\ up\ [0-9]+\ ms$ ]] || fail "$2: the README's example printed: $out"
}

# tkd on its default socket ($XDG_RUNTIME_DIR/tk/tkd.sock), as the example
# expects; its first "listening on" line says the socket exists.
mkdir -m 700 "$dir/run"
export XDG_RUNTIME_DIR="$dir/run"
unset TK_ADDR
# shellcheck source=tests/install/tkd.sh
source "$(dirname "$0")/tkd.sh"
start_tkd "$dir/tkd.log" "$tkd" --log-level info || fail "tkd did not start (its log above)"

# (1) A folder, linked: its dependency from the clone's own node_modules.
clone "$dir/c1"
npm_config_cache=$user_cache npm ci --omit=dev --prefix "$dir/c1/client/ts" >"$dir/ci.txt" 2>&1 ||
    fail "npm ci --omit=dev in the clone failed (the npm cache npm ci --prefix client/ts fills lacks a package?): $(cat "$dir/ci.txt")"
[ ! -e "$dir/c1/client/ts/node_modules/typescript" ] || fail "npm ci --omit=dev installed typescript"
app "$dir/a1"
(cd "$dir/a1" && npm install "$dir/c1/client/ts") || fail "npm install of the clone's client/ts failed"
[ -L "$dir/a1/node_modules/tk-client" ] || fail "npm install of a folder did not link it"
example "$dir/a1" "folder, linked"

# (1) A folder, copied (--install-links): npm packs it as npm pack would,
# running prepare alone, and installs its dependency into the app.
clone "$dir/c2"
app "$dir/a2"
(cd "$dir/a2" && npm install --install-links "$protobuf_tgz" "$dir/c2/client/ts") ||
    fail "npm install --install-links of the clone's client/ts failed"
if [ ! -d "$dir/a2/node_modules/tk-client" ] || [ -L "$dir/a2/node_modules/tk-client" ]; then
    fail "npm install --install-links did not copy the folder"
fi
example "$dir/a2" "folder, copied"

# (2) The tarball, packed in a clone with its TypeScript (prepack runs
# tsc), installed once the clone is gone.
clone "$dir/c3"
ln -s "$ts/node_modules" "$dir/c3/client/ts/node_modules"
(cd "$dir/c3/client/ts" && npm pack --pack-destination "$dir" >/dev/null) || fail "npm pack failed"
tgz="$dir/tk-client-$(node -p 'require(process.argv[1]).version' "$ts/package.json").tgz"
[ -f "$tgz" ] || fail "npm pack made no $tgz"

# (3) The file list: what npm pack --dry-run lists, against what a user
# needs; list_is_right fails on anything else, and says what.
rm -f "$dir/c3/client/ts/node_modules"
mv "$dir/c3" "$dir/c3-packed"
tar -tzf "$tgz" | sed 's|^package/||' | LC_ALL=C sort >"$dir/tgz.txt"
expected() {
    {
        printf '%s\n' LICENSE README.md package.json
        git -C "$src" ls-files -- client/ts/src gen/ts | grep '\.ts$' |
            sed -e 's|^client/ts/src/|dist/src/|' -e 's|^gen/ts/|dist/gen/|' -e 's|\.ts$||' |
            while IFS= read -r f; do printf '%s.js\n%s.d.ts\n' "$f" "$f"; done
    } | LC_ALL=C sort
}
expected >"$dir/expected.txt"
list_is_right() { # list_is_right PACKDIR: npm pack --dry-run --json there
    (cd "$1" && npm pack --dry-run --json --ignore-scripts 2>/dev/null) |
        node -e 'let s = ""; process.stdin.on("data", (d) => s += d).on("end", () =>
            console.log(JSON.parse(s)[0].files.map((f) => f.path).join("\n")))' |
        LC_ALL=C sort >"$dir/listed.txt"
    diff "$dir/expected.txt" "$dir/listed.txt"
}
list_is_right "$dir/c3-packed/client/ts" ||
    fail "npm pack --dry-run lists other than the package's files (diff above: expected, then listed)"
diff "$dir/expected.txt" "$dir/tgz.txt" || fail "the tarball holds other than the package's files (diff above)"
echo "pack list: $(wc -l <"$dir/expected.txt") files"

app "$dir/a3"
(cd "$dir/a3" && npm install "$protobuf_tgz" "$tgz") || fail "npm install of the tarball failed"
example "$dir/a3" "tarball"

# Negative controls of the list: a source map, and test/ shipped.
cp -r "$dir/c3-packed" "$dir/c5"
: >"$dir/c5/client/ts/dist/src/index.js.map"
! list_is_right "$dir/c5/client/ts" >/dev/null || fail "negative control: a .map in the pack passed the list"
cp -r "$dir/c3-packed" "$dir/c6"
node -e 'const f = process.argv[1], p = require(f); p.files.push("test");
    require("fs").writeFileSync(f, JSON.stringify(p, null, 2) + "\n")' "$dir/c6/client/ts/package.json"
! list_is_right "$dir/c6/client/ts" >/dev/null || fail "negative control: test/ in the pack passed the list"

# Negative control of the folder install: prepare running tsc, as the
# package had, fails with no TypeScript.
clone "$dir/c4"
node -e 'const f = process.argv[1], p = require(f); p.scripts.prepare = "tsc -p .";
    require("fs").writeFileSync(f, JSON.stringify(p, null, 2) + "\n")' "$dir/c4/client/ts/package.json"
app "$dir/a4"
if (cd "$dir/a4" && npm install "$dir/c4/client/ts") >"$dir/a4.txt" 2>&1; then
    fail "negative control: a prepare script running tsc installed with no TypeScript"
fi
grep -q "tsc ran at install time" "$dir/a4.txt" ||
    fail "negative control: the install failed, but not for tsc: $(cat "$dir/a4.txt")"
echo "negative controls: ok"
echo "npm: ok"
