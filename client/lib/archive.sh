#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Makes the installed libtkclient.a (client/meson.build runs it): the
# library's objects and tk's NNG linked into one relocatable object
# (cc -r pulls from the NNG archive only what the library calls, as the
# link of libtkclient.so does), in which objcopy keeps global only the
# names libtkclient.map exports; everything else, NNG's 944 names and
# common/'s tkc_ among them, becomes local to that object. So a program
# that links libtkclient.a statically beside the system's libnng gets the
# system's for its own nng_ calls, never a duplicate or a silent swap, as
# with libtkclient.so (the test two-nngs-static). GNU objcopy: Linux's.
#
#   archive.sh OUT.a MAP LIBRARY.a NNG.a AR OBJCOPY CC...
set -euo pipefail
out=${1:?output archive}
map=${2:?libtkclient.map}
lib=${3:?the archive of the library objects}
nng=${4:?the NNG archive}
ar=${5:?ar}
objcopy=${6:?objcopy}
shift 6
[ $# -gt 0 ] || { echo "archive.sh: no compiler given" >&2; exit 2; }

# The map's global patterns, one a line: the words between "global:" and
# "local:", each ending in ';'.
keep=()
while read -r pattern; do
    keep+=(--keep-global-symbol="$pattern")
done < <(sed -n '/global:/,/local:/p' "$map" | grep -oE '^[[:space:]]*[A-Za-z_][][A-Za-z0-9_*?-]*;' | tr -d ' ;\t')
[ ${#keep[@]} -gt 0 ] || { echo "archive.sh: no global pattern in $map" >&2; exit 1; }

obj="${out%.a}.o"
rm -f "$out" "$obj"
"$@" -r -nostdlib -o "$obj.tmp" -Wl,--whole-archive "$lib" -Wl,--no-whole-archive "$nng"
# tk_catalog__*: names the map's tk_[a-z]* matches, compiled hidden so
# that libtkclient.so does not export them; objcopy sees no visibility.
"$objcopy" --wildcard "${keep[@]}" --keep-global-symbol='!tk_[a-z]*__*' "$obj.tmp" "$obj"
rm -f "$obj.tmp"
"$ar" rcs "$out" "$obj"
rm -f "$obj"
