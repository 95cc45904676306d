#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/package/fresh-root.sh's checks, run by it inside the fresh root it
# made (chroot; the .debs in /tmp/debs, the README's C example in
# /tmp/app.c): it says what they are.
set -euo pipefail
fail() { echo "fresh-root: $*" >&2; exit 1; }
export PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8

# Fresh: nothing of tk is here yet.
for f in /usr/bin/tkd /usr/bin/tkcall; do [ ! -e "$f" ] || fail "$f exists before dpkg -i"; done
# (grep without -q reads all: an early exit would SIGPIPE ldconfig, and
# pipefail would take that for "not found")
if ldconfig -p | grep libtkclient; then fail "a libtkclient is installed before dpkg -i"; fi
! getent passwd tk >/dev/null || fail "the user tk exists before dpkg -i"

dpkg -i /tmp/debs/*.deb >/tmp/dpkg.log 2>&1 || { cat /tmp/dpkg.log >&2; fail "dpkg -i failed"; }
for p in tkd tkcall libtkclient0 libtkclient-dev; do
    [ "$(dpkg-query -W -f='${db:Status-Status}' "$p")" = installed ] || fail "$p is not installed"
done

# What the postinst and dh_installsystemd did.
getent passwd tk >/dev/null || fail "the postinst did not create the user tk"
unit=/lib/systemd/system/tkd.service
[ -f "$unit" ] || fail "no $unit"
[ -L /etc/systemd/system/multi-user.target.wants/tkd.service ] ||
    fail "tkd.service is not enabled (no multi-user.target.wants link)"
# verify says nothing about a sound unit (at notice: not its debug chatter).
if ! SYSTEMD_LOG_LEVEL=notice systemd-analyze verify "$unit" >/tmp/verify.log 2>&1 ||
    grep -q . /tmp/verify.log; then
    cat /tmp/verify.log >&2
    fail "systemd-analyze verify $unit complained (above)"
fi

# The conventions `tkd install` renders for its user unit hold here too:
# a change to tkd's shutdown bound (TimeoutStopSec=) shows up.
user_unit=$(HOME=/tmp tkd install --dry-run --backend systemd)
for key in Type KillMode TimeoutStopSec Restart RestartSec StartLimitIntervalSec; do
    want=$(sed -n "s/^$key=//p" <<<"$user_unit")
    got=$(sed -n "s/^$key=//p" "$unit")
    [ -n "$want" ] || fail "tkd install renders no $key= (its unit: $user_unit)"
    [ "$got" = "$want" ] ||
        fail "$unit: $key=$got, where tkd install renders $key=$want"
done

# man finds both pages.
for page in 8/tkd 1/tkcall; do
    where=$(man -w "${page#*/}" 2>&1) || true
    [ "$where" = "/usr/share/man/man$page.${page%/*}.gz" ] || fail "man -w ${page#*/}: $where"
done

# Every library the programs load belongs to an installed package: one
# dpkg-query for them all (one each took 0.6 s), each asked for as ldd
# names it and as its real path, each with and without /usr (usrmerge).
libs=()
for f in /usr/bin/tkd /usr/bin/tkcall /usr/lib/*/libtkclient.so.0; do
    ! ldd "$f" | grep 'not found' || fail "$f: libraries not found (above)"
    mapfile -t -O "${#libs[@]}" libs < <(ldd "$f" | awk '$2 == "=>" { print $3 }')
done
paths() {
    local p
    for p in "$1" "$(readlink -f "$1")"; do
        case $p in /usr/*) printf '%s\n%s\n' "$p" "${p#/usr}" ;; *) printf '%s\n%s\n' "$p" "/usr$p" ;; esac
    done
}
mapfile -t cands < <(for lib in "${libs[@]}"; do paths "$lib"; done | sort -u)
owned=$(dpkg-query -S "${cands[@]}" 2>/dev/null | sed 's/^.*: //' || true)
for lib in $(printf '%s\n' "${libs[@]}" | sort -u); do
    grep -qxF -f <(paths "$lib") <<<"$owned" || fail "$lib is loaded and no package owns it"
done

# tkd as the unit starts it: its user, group, umask, working directory and
# ExecStart, with the directories systemd's StateDirectory= and
# RuntimeDirectory= make (owner tk, their Mode=).
unit_value() { sed -n "s/^$1=//p" "$unit"; }
[ "$(unit_value User)" = tk ] || fail "the unit does not run as tk"
mode_state=$(unit_value StateDirectoryMode)
mode_run=$(unit_value RuntimeDirectoryMode)
install -d -o tk -g tk -m "$mode_state" "/var/lib/$(unit_value StateDirectory)"
install -d -o tk -g tk -m "$mode_run" "/run/$(unit_value RuntimeDirectory)"
read -ra exec_start <<<"$(unit_value ExecStart)"
cd "$(unit_value WorkingDirectory)"
umask "$(unit_value UMask)"
exec 3< <(exec setpriv --reuid=tk --regid=tk --init-groups "${exec_start[@]}" 2>&1)
tkd_pid=$!
up=no
while IFS= read -r -t 20 -u 3 line; do
    printf '%s\n' "$line" >>/tmp/tkd.log
    case $line in *"listening on"*) up=yes; break ;; esac
done
[ "$up" = yes ] || { cat /tmp/tkd.log >&2; fail "the installed tkd did not start (its log above)"; }
cat <&3 >>/tmp/tkd.log &
exec 3<&-
addr=ipc:///run/tk/tkd.sock
grep -q "listening on $addr" /tmp/tkd.log || fail "tkd is not on $addr: $(cat /tmp/tkd.log)"
[ "$(stat -c %U:%a /run/tk/tkd.sock)" = tk:600 ] || fail "socket: $(stat -c %U:%a /run/tk/tkd.sock)"

# The installed tkcall, as tk: answered; as root: refused (another uid).
out=$(setpriv --reuid=tk --regid=tk --init-groups tkcall -a "$addr" ping) ||
    fail "tkcall ping as tk failed: $out"
grep -q '0.1.0' <<<"$out" || fail "tkcall ping as tk printed: $out"
if out=$(tkcall -a "$addr" ping 2>&1); then fail "tkcall ping as root was answered: $out"; fi
grep -q PERMISSION_DENIED <<<"$out" || fail "tkcall ping as root: $out"

# The README's C example, built with libtkclient-dev's pkg-config.
# shellcheck disable=SC2046 # pkg-config prints several words
cc -Wall -Werror -o /tmp/app /tmp/app.c $(pkg-config --cflags --libs tkclient) ||
    fail "the README's C example does not build against libtkclient-dev"
out=$(TK_ADDR=$addr setpriv --reuid=tk --regid=tk --init-groups /tmp/app) ||
    fail "the README's C example failed: $out"
case "$out" in "tkd 0.1.0, up "*" ms") ;; *) fail "the README's C example printed: $out" ;; esac

# Stopped as systemd stops it (KillMode=mixed: SIGTERM to tkd): exit 0.
kill -TERM "$tkd_pid"
rc=0
wait "$tkd_pid" || rc=$?
[ "$rc" -eq 0 ] || { cat /tmp/tkd.log >&2; fail "tkd exited $rc on SIGTERM"; }
echo "fresh-root: installed, tkd answered the installed tkcall as tk ($out)" >&2
