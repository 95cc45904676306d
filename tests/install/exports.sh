#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# libtkclient.so exports its API and nothing else (client/lib/libtkclient.map):
# tk_ and a lower-case word (never a double underscore: tk_catalog__ and
# tk__ are internals), protobuf-c's tk__v1__, and the map's version node.
# Not tk's NNG (nng_, nni_, parse_ip ...), which a program that also loads
# another NNG would otherwise bind to, nor common/'s tkc_. And every
# function and descriptor the installed headers declare is exported.
#
# exports.sh LIB SOURCE BUILD: LIB (the .so, or the installed .a) passes.
# exports.sh --control LIB SOURCE BUILD: LIB is the same objects linked
# without the map, with NNG compiled with public names (the subproject's
# nng-public, as before issue 34); the check must fail on it, naming
# NNG's and the seams' names: it sees a leak where there is one.
set -euo pipefail
control=no
if [ "${1:-}" = --control ]; then control=yes; shift; fi
lib=${1:?libtkclient.so}
src=${2:?source root}
build=${3:?build dir}

# The version node(s) the map defines: "NAME {" at the start of a line.
nodes=$(grep -oE '^[A-Z][A-Z0-9_]* \{' "$src/client/lib/libtkclient.map" | cut -d' ' -f1)
[ -n "$nodes" ] || { echo "exports: no version node in libtkclient.map" >&2; exit 1; }

# nm -D prints a versioned name as name@@NODE; the name is before the @.
# An archive (the installed libtkclient.a, client/lib/archive.sh) has no
# dynamic symbols: its global ones are what a static link sees.
case $lib in
    *.a) exported=$(nm -g --defined-only "$lib" | awk 'NF == 3 {print $3}' | sort -u) ;;
    *) exported=$(nm -D --defined-only "$lib" | awk 'NF == 3 {print $3}' | sed 's/@.*//' | sort -u) ;;
esac
leaks=$(grep -vE '^(tk_[a-z][a-z0-9]*(_[a-z0-9]+)*|tk__v1__[a-z0-9_]+)$' <<<"$exported" |
    grep -vxF "$nodes" || true)

# What the installed headers declare (meson's install list names them): a
# tk_ function, or a tk__v1__ function or descriptor.
headers=$(meson introspect "$build" --installed |
    /usr/bin/python3 -c 'import json,sys; print("\n".join(k for k in json.load(sys.stdin) if k.endswith(".h")))')
[ -n "$headers" ] || { echo "exports: meson installs no header" >&2; exit 1; }
# shellcheck disable=SC2086 # one header a word; no header path has a space
declared=$(grep -ohE '\b(tk_[a-z][a-z0-9_]*|tk__v1__[a-z0-9_]+)\s*\(|\btk__v1__[a-z0-9_]+__descriptor\b' $headers |
    sed 's/[[:space:]]*($//' | sort -u)
missing=$(comm -23 <(printf '%s\n' "$declared" tk_call tk_client_open | sort -u) <(printf '%s\n' "$exported"))

if [ $control = yes ]; then
    for want in nng_dial nni_aio_init parse_ip tk__test_route; do
        grep -qxF "$want" <<<"$leaks" ||
            { echo "exports: the control library's leaks do not include $want: the check cannot see a leak" >&2; exit 1; }
    done
    echo "exports (control): $(wc -l <<<"$leaks") names outside the API found in $lib, as expected without the map"
    exit 0
fi
status=0
if [ -n "$leaks" ]; then
    echo "exports: $lib exports $(wc -l <<<"$leaks") names outside tk's API (client/lib/libtkclient.map says what it may):" >&2
    printf '  %s\n' "${leaks//$'\n'/$'\n  '}" >&2
    status=1
fi
if [ -n "$missing" ]; then
    echo "exports: $lib does not export these names the installed headers declare:" >&2
    printf '  %s\n' "${missing//$'\n'/$'\n  '}" >&2
    status=1
fi
[ $status = 0 ] && echo "exports: ok ($(wc -l <<<"$exported") names, $(wc -l <<<"$declared") declared by the installed headers)"
exit $status
