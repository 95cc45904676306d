#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# -Dclient_only=true builds the clients with NNG (the subproject),
# protobuf-c and json-c and nothing else: set up where pkg-config sees only
# json-c and libprotobuf-c and cmake is /bin/false (so neither libgit2 nor
# libpq can be found any way meson looks), built, installed into a
# temporary DESTDIR, which then holds libtkclient, tkcall, the headers,
# tkclient.pc, tkcall(1) and the completions and no tkd; and the built
# tkcall calls a tkd of the full build. Its control: the same machine
# without the option (and without tests, so that cmocka is not what
# stops it) fails for want of libpq.
#   client-only.sh SOURCE_ROOT TKD
set -euo pipefail
src=${1:?source root}
tkd=${2:?the full build\'s tkd}
work=$(mktemp -d)
tkd_pid=
trap 'kill "$tkd_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
fail() { echo "client-only: $*" >&2; exit 1; }

mkdir "$work/pc"
for p in json-c libprotobuf-c; do
    dir=$(pkg-config --variable=pcfiledir "$p") || fail "no $p.pc (tools/install-deps)"
    ln -s "$dir/$p.pc" "$work/pc/"
done
printf "[binaries]\ncmake = '/bin/false'\n" >"$work/native.ini"
setup() { # build dir, options...
    local b=$1
    shift
    PKG_CONFIG_LIBDIR="$work/pc" meson setup "$b" "$src" \
        --native-file "$work/native.ini" "$@" >"$b.log" 2>&1
}

# The control first: without the option this machine cannot build.
if setup "$work/full" -Dtests=false; then
    fail "a full build configured with no libgit2, libpq or cmake: the check proves nothing"
fi
grep -qE 'Dependency "(libpq|libgit2)" not found' "$work/full.log" ||
    { cat "$work/full.log" >&2; fail "the full build failed, but not for libpq or libgit2"; }

setup "$work/b" -Dclient_only=true -Dwerror=true ||
    { cat "$work/b.log" >&2; fail "meson setup -Dclient_only=true failed"; }
ninja -C "$work/b" >"$work/ninja.log" 2>&1 ||
    { tail -n 40 "$work/ninja.log" >&2; fail "ninja failed"; }
deps=$(meson introspect "$work/b" --dependencies |
    /usr/bin/python3 -c 'import json,sys; print(" ".join(sorted(d["name"] for d in json.load(sys.stdin))))')
[ "$deps" = "json-c libprotobuf-c threads" ] ||
    fail "the client-only build depends on: $deps (json-c libprotobuf-c threads expected)"

dest="$work/dest"
meson install -C "$work/b" --destdir "$dest" --quiet --no-rebuild
for want in bin/tkcall include/tk/client.h include/tk/version.h \
    include/tk/v1/control.tk.h share/man/man1/tkcall.1 \
    share/bash-completion/completions/tkcall share/zsh/site-functions/_tkcall; do
    [ -n "$(find "$dest" -path "*/$want")" ] || fail "not installed: $want"
done
for want in libtkclient.so.0 libtkclient.a pkgconfig/tkclient.pc; do
    [ -n "$(find "$dest" -path "*/lib*/$want")" ] || fail "not installed: $want"
done
if [ -n "$(find "$dest" -name tkd -o -name tkd.8)" ]; then
    fail "a client-only install holds tkd: $(find "$dest" -name tkd -o -name tkd.8)"
fi

# The built tkcall against the full build's tkd.
run="$work/run"
mkdir -m 700 "$run"
# shellcheck source=tests/install/tkd.sh
source "$(dirname "$0")/tkd.sh"
start_tkd "$work/tkd.log" "$tkd" --listen "ipc://$run/tkd.sock" || fail "tkd did not start (its log above)"
out=$("$work/b/client/tkcall" -o compact -a "ipc://$run/tkd.sock" ping)
case $out in *'"serverVersion"'*) ;; *) fail "the client-only tkcall's ping printed: $out" ;; esac
echo "client-only: ok (depends on $deps; $out)"
