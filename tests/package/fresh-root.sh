#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Debian packages work once installed: in a root of its own (private
# mount, PID and network namespaces; an overlay over / with a throwaway
# upper layer, and an empty /tmp, /run, /var/lib/tk, checkout and .deb
# folder, so neither the build tree nor an earlier install is there),
# dpkg -i the four .debs tools/package made, then as systemd would: the
# postinst made the user tk, the unit is enabled, `systemd-analyze verify`
# passes and it keeps `tkd install`'s conventions; tkd started as ExecStart
# says (as tk, in /var/lib/tk, socket in /run/tk) answers the installed
# tkcall's ping, and a caller of another uid is refused; every library
# they load is a package's; the man pages are where man looks; the
# README's C example builds with libtkclient-dev's pkg-config and calls it.
# systemd itself does not run here (no init in the namespace): the unit's
# directives are verified, not executed.
#   tests/package/fresh-root.sh [DEB_DIR]     default build/deb; needs root
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)

if [ "${1:-}" != --inside ]; then
    debs=$(realpath -m "${1:-$top/build/deb}")
    [ "$(id -u)" -eq 0 ] || { echo "fresh-root: needs root (unshare, mount, chroot)" >&2; exit 2; }
    for p in tkd tkcall libtkclient0 libtkclient-dev; do
        compgen -G "$debs/${p}_*.deb" >/dev/null ||
            { echo "fresh-root: no $p .deb in $debs: run tools/package first" >&2; exit 2; }
    done
    start=$(date +%s%N)
    unshare --mount --pid --net --fork --kill-child "$0" --inside "$debs" "$top/README.md"
    echo "fresh-root: passed in $((($(date +%s%N) - start) / 1000000)) ms" >&2
    exit 0
fi

# Inside the namespaces: build the root, copy the packages in, go in.
debs=$2
readme=$3
mount --make-rprivate /
t=$(mktemp -d)
mount -t tmpfs tmpfs "$t"
mkdir "$t/upper" "$t/work" "$t/root"
mount -t overlay overlay -o "lowerdir=/,upperdir=$t/upper,workdir=$t/work" "$t/root"
r=$t/root
# Empty: /tmp, /run, tk's state, and the checkout and the packages' folder
# (so nothing of the build is reachable but through the .debs).
for d in /tmp /run /var/lib/tk "$(dirname "$0")/../.." "$debs"; do
    d=$(realpath -m "$d")
    mkdir -p "$r$d"
    mount -t tmpfs tmpfs "$r$d"
done
mount -t proc proc "$r/proc"
mount --rbind /dev "$r/dev"
mkdir "$r/tmp/debs"
for p in tkd tkcall libtkclient0 libtkclient-dev; do
    cp "$debs/${p}"_*.deb "$r/tmp/debs/"
done
awk '/^```c$/{on=1; next} /^```$/{if(on) exit} on' "$readme" >"$r/tmp/app.c"
cp "$(dirname "$0")/in-root.sh" "$r/tmp/in-root.sh"
exec chroot "$r" /bin/bash /tmp/in-root.sh

