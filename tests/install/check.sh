#!/usr/bin/env bash
# meson install works for another C project: install into a temporary
# DESTDIR, build the README's C example with pkg-config against it (shared
# and static), run it against the installed tkd, and check tkcall runs.
set -euo pipefail
src=${1:?source root}
build=${2:?build dir}
dest=$(mktemp -d)
trap 'kill "$tkd_pid" 2>/dev/null || true; rm -rf "$dest"' EXIT
tkd_pid=

meson install -C "$build" --destdir "$dest" --quiet --no-rebuild
prefix=$(meson introspect "$build" --buildoptions |
    /usr/bin/python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"][0])')
root="$dest$prefix"
pc=$(dirname "$(find "$root" -name tkclient.pc | head -1)")
[ -n "$pc" ] || { echo "tkclient.pc was not installed" >&2; exit 1; }
export PKG_CONFIG_PATH="$pc"
pcflags=(--define-variable=prefix="$root")

# The README's C block, exactly as a user would copy it.
awk '/^```c$/{on=1; next} /^```$/{if(on) exit} on' "$src/README.md" >"$dest/app.c"
grep -q tk_control_ping "$dest/app.c" || { echo "README has no C example" >&2; exit 1; }

# shellcheck disable=SC2046 # pkg-config prints several words
cc -Wall -Werror -o "$dest/app" "$dest/app.c" \
    $(pkg-config "${pcflags[@]}" --cflags --libs tkclient) \
    -Wl,-rpath,"$(pkg-config "${pcflags[@]}" --variable=libdir tkclient)"
libdir=$(pkg-config "${pcflags[@]}" --variable=libdir tkclient)
# shellcheck disable=SC2046
cc -Wall -Werror -o "$dest/app-static" "$dest/app.c" \
    $(pkg-config "${pcflags[@]}" --cflags tkclient) "$libdir/libtkclient.a" \
    $(pkg-config "${pcflags[@]}" --static --libs-only-l tkclient | sed 's/-ltkclient//')
if ldd "$dest/app-static" | grep -q libtkclient; then
    echo "app-static links libtkclient dynamically" >&2
    exit 1
fi

run="$dest/run"
mkdir -m 700 "$run"
# tkd's log on fd 3; its "listening on" line says the socket exists (as
# tests/conformance/wire.sh waits for it). The read ends at that line, at
# EOF (tkd exited) or after 20 s of silence; then a copy drains the rest
# into tkd.log, so tkd never blocks on a full pipe.
exec 3< <(exec "$root/bin/tkd" --listen "ipc://$run/tkd.sock" 2>&1)
tkd_pid=$!
up=no
while IFS= read -r -t 20 -u 3 line; do
    printf '%s\n' "$line" >>"$dest/tkd.log"
    case $line in *"listening on"*) up=yes; break ;; esac
done
if [ "$up" != yes ]; then
    echo "install: the installed tkd did not start; its log:" >&2
    cat "$dest/tkd.log" >&2
    exit 1
fi
cat <&3 >>"$dest/tkd.log" &
exec 3<&-
out=$(TK_ADDR="ipc://$run/tkd.sock" "$dest/app")
case "$out" in "tkd "*", up "*" ms") ;; *) echo "app printed: $out" >&2; exit 1 ;; esac
out=$(TK_ADDR="ipc://$run/tkd.sock" "$dest/app-static")
case "$out" in "tkd "*", up "*" ms") ;; *) echo "static app printed: $out" >&2; exit 1 ;; esac
TK_ADDR="ipc://$run/tkd.sock" "$root/bin/tkcall" list | grep -qx "tk.v1.Control/Ping"
echo "install: ok ($out)"
