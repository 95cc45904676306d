#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# meson install works for another C project: install into a temporary
# DESTDIR, build the README's C example with pkg-config against it (shared
# and static), run it against the installed tkd, and check tkcall runs.
# Each installed header compiles alone as C11 and as C++, and none declares
# a test seam.
# And for a person: the man pages tkcall(1) and tkd(8) are installed and
# say every option --help does, and tkcall's bash and zsh completions offer
# the methods the installed tkd serves, the flags, and a request's fields
# (zsh's driven in a real interactive zsh, by tests/install/zsh-complete.zsh).
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

# The installed headers: each compiles alone, with -Werror, as C11 and as
# C++ (a C++ program includes them too); and none declares a test seam or
# another module-internal name, tk__*, but protobuf-c's names of the
# package tk.v1 (tk__v1__*).
incdir=$(pkg-config "${pcflags[@]}" --variable=includedir tkclient)
[ -f "$incdir/tk/version.h" ] || { echo "install: no tk/version.h in $incdir" >&2; exit 1; }
headers=$(cd "$incdir" && find tk -name '*.h' | sort)
[ -n "$headers" ] || { echo "install: no headers in $incdir/tk" >&2; exit 1; }
for h in $headers; do # (a declaration after it: no empty unit)
    # shellcheck disable=SC2046 # pkg-config prints several words
    printf '#include <%s>\nint tk_check_unit;\n' "$h" |
        cc -std=c11 -Wall -Wextra -Wpedantic -Werror -fsyntax-only -x c - \
            $(pkg-config "${pcflags[@]}" --cflags tkclient) ||
        { echo "install: $h does not compile alone as C11" >&2; exit 1; }
    # shellcheck disable=SC2046
    printf '#include <%s>\nint tk_check_unit;\n' "$h" |
        c++ -std=c++11 -Wall -Wextra -Werror -fsyntax-only -x c++ - \
            $(pkg-config "${pcflags[@]}" --cflags tkclient) ||
        { echo "install: $h does not compile alone as C++" >&2; exit 1; }
done
internal=$(grep -rEon '\btk__[A-Za-z0-9_]*' "$incdir/tk" | grep -v ':tk__v1__' || true)
if [ -n "$internal" ]; then
    echo "install: the installed headers declare tk__ names (test seams go in" \
        "client/lib/test_seams.h, which is not installed):" >&2
    echo "$internal" >&2
    exit 1
fi

# The README's C block, exactly as a user would copy it.
awk '/^```c$/{on=1; next} /^```$/{if(on) exit} on' "$src/README.md" >"$dest/app.c"
grep -q tk_control_ping "$dest/app.c" || { echo "README has no C example" >&2; exit 1; }

# shellcheck disable=SC2046 # pkg-config prints several words
cc -Wall -Werror -o "$dest/app" "$dest/app.c" \
    $(pkg-config "${pcflags[@]}" --cflags --libs tkclient) \
    -Wl,-rpath,"$(pkg-config "${pcflags[@]}" --variable=libdir tkclient)"
libdir=$(pkg-config "${pcflags[@]}" --variable=libdir tkclient)
system_nng=$(meson introspect "$build" --buildoptions |
    /usr/bin/python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="system_nng"][0])')
if [ "$system_nng" = False ] && [ "$(uname -s)" = Linux ]; then
    # As a user links statically: -static and exactly what
    # `pkg-config --static --libs` says, nothing added. libtkclient.a
    # carries tk's NNG (client/lib/archive.sh) and tkclient.pc names no
    # NNG, so the program holds tk's NNG and no other: Debian's libnng.a
    # (libnng-dev) is on the default path, and a -lnng in the .pc would
    # have linked it. glibc warns about getaddrinfo in a static program.
    # shellcheck disable=SC2046
    cc -Wall -Werror -static -o "$dest/app-static" "$dest/app.c" \
        $(pkg-config "${pcflags[@]}" --static --cflags --libs tkclient) 2>"$dest/static.err" || {
        cat "$dest/static.err" >&2
        echo "install: a static link with pkg-config --static --libs tkclient failed" >&2
        exit 1
    }
    # tk's NNG, never Debian's: only tk's has the option patch 06 adds
    # (subprojects/packagefiles/nng-patches/06-*), and no libnng is loaded.
    if ! grep -qa handshake-timeout "$dest/app-static"; then
        echo "install: app-static does not hold tk's NNG (no handshake-timeout option in it)" >&2
        exit 1
    fi
    if ldd "$dest/app-static" >/dev/null 2>&1; then
        echo "install: app-static, linked -static, loads shared libraries: $(ldd "$dest/app-static")" >&2
        exit 1
    fi
    # The dynamic one loads libtkclient and no libnng either.
    if ldd "$dest/app" | grep -q libnng; then
        echo "install: app loads the system's NNG: $(ldd "$dest/app" | grep libnng)" >&2
        exit 1
    fi
else
    # A system NNG (macOS: Homebrew's) is a shared library no archive
    # carries: the archive, then the rest of what pkg-config --static says.
    # shellcheck disable=SC2046
    cc -Wall -Werror -o "$dest/app-static" "$dest/app.c" \
        $(pkg-config "${pcflags[@]}" --cflags tkclient) "$libdir/libtkclient.a" \
        $(pkg-config "${pcflags[@]}" --static --libs-only-l tkclient | sed 's/-ltkclient//')
    # The shared libraries it loads: ldd's list, or otool -L's where there
    # is no ldd (macOS). A list that cannot be made names none.
    if command -v ldd >/dev/null; then
        libs=$(ldd "$dest/app-static" || true)
    elif command -v otool >/dev/null; then
        libs=$(otool -L "$dest/app-static" || true)
    else
        echo "install: neither ldd nor otool to list app-static's libraries" >&2
        exit 1
    fi
    if grep -q libtkclient <<<"$libs"; then
        echo "app-static links libtkclient dynamically" >&2
        exit 1
    fi
fi

run="$dest/run"
mkdir -m 700 "$run"
# shellcheck source=tests/install/tkd.sh
source "$(dirname "$0")/tkd.sh"
start_tkd "$dest/tkd.log" "$root/bin/tkd" --listen "ipc://$run/tkd.sock" ||
    { echo "install: the installed tkd did not start (its log above)" >&2; exit 1; }
out=$(TK_ADDR="ipc://$run/tkd.sock" "$dest/app")
case "$out" in "tkd "*", up "*" ms") ;; *) echo "app printed: $out" >&2; exit 1 ;; esac
out=$(TK_ADDR="ipc://$run/tkd.sock" "$dest/app-static")
case "$out" in "tkd "*", up "*" ms") ;; *) echo "static app printed: $out" >&2; exit 1 ;; esac
TK_ADDR="ipc://$run/tkd.sock" "$root/bin/tkcall" list | grep -qx "tk.v1.Control/Ping"

# Man pages: where man looks, and every option of --help in them.
for page in man1/tkcall.1:tkcall man8/tkd.8:tkd; do
    file=$(find "$root" -path "*/man/${page%%:*}" | head -1)
    [ -n "$file" ] || { echo "install: no ${page%%:*} under $root" >&2; exit 1; }
    # man -l reads a file (man-db's man, mandoc's); where that fails (a man
    # without -l), mandoc(1) formats it itself.
    text=$(man -l "$file" 2>/dev/null) ||
        { command -v mandoc >/dev/null && text=$(mandoc -T ascii "$file" | col -b); } ||
        { echo "install: man cannot read $file" >&2; exit 1; }
    for opt in $("$root/bin/${page#*:}" --help | grep -oE -- '--[a-z][a-z-]*' | sort -u); do
        grep -qF -- "$opt" <<<"$text" || { echo "install: $file does not say $opt" >&2; exit 1; }
    done
done

# Completion: bash's lists what the installed tkd serves.
bash_comp=$(find "$root" -path '*/bash-completion/completions/tkcall' | head -1)
zsh_comp=$(find "$root" -path '*/zsh/site-functions/_tkcall' | head -1)
if [ -z "$bash_comp" ] || [ -z "$zsh_comp" ]; then echo "install: no bash or zsh completion of tkcall" >&2; exit 1; fi
head -1 "$zsh_comp" | grep -qx '#compdef tkcall' || { echo "install: $zsh_comp is not a zsh completion of tkcall" >&2; exit 1; }
command -v zsh >/dev/null || { echo "install: no zsh (tools/install-deps installs it)" >&2; exit 1; }
zsh -n "$zsh_comp"
# The two completions share their awk programs word for word.
awk_of() { # file function -> its body, each line without its indentation
    sed -n "/^$2() {\$/,/^}\$/p" "$1" | sed 's/^ *//'
}
for fn in _tkcall_names _tkcall_object; do
    diff <(awk_of "$bash_comp" $fn) <(awk_of "$zsh_comp" $fn) >&2 ||
        { echo "install: $fn differs between the bash and zsh completions (diff above)" >&2; exit 1; }
done
complete_words() { # words... -> what bash completes for the last
    TK_ADDR="ipc://$run/tkd.sock" PATH="$root/bin:$PATH" bash -c '
        source "$1"; shift
        COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
        _tkcall
        printf "%s\n" "${COMPREPLY[@]}"' _ "$bash_comp" "$@"
}
offered=$(complete_words tkcall "")
served=$(TK_ADDR="ipc://$run/tkd.sock" "$root/bin/tkcall" list)
while IFS= read -r m; do
    grep -qxF "$m" <<<"$offered" || { echo "install: the completion does not offer $m" >&2; exit 1; }
done <<<"$served"
if ! grep -qx list <<<"$offered" || ! grep -qx describe <<<"$offered"; then
    echo "install: the completion does not offer list and describe" >&2; exit 1
fi
flags=$(complete_words tkcall --)
for opt in --addr --timeout --data --help; do
    grep -qx -- "$opt" <<<"$flags" || { echo "install: the completion does not offer $opt" >&2; exit 1; }
done
fields=$(TK_ADDR="ipc://$run/tkd.sock" PATH="$root/bin:$PATH" bash -c '
    source "$1"
    COMP_WORDS=(tkcall -d "" tk.v1.Control/Ping); COMP_CWORD=2; COMPREPLY=()
    _tkcall
    printf "%s\n" "${COMPREPLY[@]}"' _ "$bash_comp")
[ "$fields" = '{"data":' ] || { echo "install: the completion of -d for Ping offers: $fields" >&2; exit 1; }
# Every form of a method's name tkcall takes (client/tkcall/names.c), as
# far as it is typed, completes in that form: a tail that names one method
# (Git/S, Pin), the full name, grpcurl's (a dot for the slash, a leading
# dot); not a tail two methods end with (Status: Git's and Services').
bash_offers() { # words... -> what bash offers for the last, on one line
    complete_words "$@" | sed '/^$/d' | sort | tr '\n' ' '
}
for pair in "Git/S:Git/Status" "tk.v1.Git/S:tk.v1.Git/Status" "Pin:Ping" \
    "tk.v1.Git.S:tk.v1.Git.Status" ".tk.v1.Git/S:.tk.v1.Git/Status" "Stat:Stats"; do
    offered=$(bash_offers tkcall "${pair%%:*}")
    [ "$offered" = "${pair#*:} " ] ||
        { echo "install: the completion of 'tkcall ${pair%%:*}' offers: $offered" >&2; exit 1; }
done
offered=$(bash_offers tkcall describe Git/Co)
[ "$offered" = "Git/Commit Git/ConfigGet Git/ConfigSet " ] ||
    { echo "install: the completion of 'tkcall describe Git/Co' offers: $offered" >&2; exit 1; }
offered=$(bash_offers tkcall list Gi)
[ "$offered" = "Git " ] || { echo "install: the completion of 'tkcall list Gi' offers: $offered" >&2; exit 1; }
# After -d, the fields the object has not got yet, where a key may begin:
# Git/Log's, after a quote as people type it, less repo (and maxCount);
# none inside a nested array.
log_fields=$(bash_offers tkcall Git/Log -d "'")
case $log_fields in *"'{\"maxCount\": "*"'{\"repo\": "*) ;;
    *) echo "install: the completion of -d ' for Git/Log offers: $log_fields" >&2; exit 1 ;; esac
typed="'{\"repo\":\".\","
want=$(sed "s/'{/$typed/g; s/$typed\"repo\": //" <<<"$log_fields")
offered=$(bash_offers tkcall Git/Log -d "$typed")
[ "$offered" = "$want" ] ||
    { echo "install: the completion of -d $typed for Git/Log offers: $offered, not $want" >&2; exit 1; }
offered=$(bash_offers tkcall Git/Log -d "$typed\"maxCount\":3,")
want=$(sed "s/'{/$typed\"maxCount\":3,/g; s/[^ ]*\"repo\": //; s/[^ ]*\"maxCount\": //" <<<"$log_fields")
[ "$offered" = "$want" ] ||
    { echo "install: the completion of -d $typed\"maxCount\":3, for Git/Log offers: $offered, not $want" >&2; exit 1; }
offered=$(bash_offers tkcall Git/Log -d "$typed\"paths\":[")
[ -z "$offered" ] || { echo "install: the completion of -d inside an array offers: $offered" >&2; exit 1; }

# zsh's, in a real interactive zsh on a pty with the installed directory in
# fpath and compinit (tests/install/zsh-complete.zsh): a Tab offers the
# same, and completes a flag and -o's values.
zsh_complete() { # line -> the line after a Tab, then what the Tab offered
    TK_ADDR="ipc://$run/tkd.sock" PATH="$root/bin:$PATH" \
        zsh -f "$src/tests/install/zsh-complete.zsh" "$(dirname "$zsh_comp")" "$1"
}
zsh_offered() { # line -> what a Tab offered, one a line
    zsh_complete "$1" | tail -n +2
}
offered=$(zsh_offered 'tkcall ')
while IFS= read -r m; do
    grep -qxF "$m" <<<"$offered" || { echo "install: zsh's completion does not offer $m; it offers: $offered" >&2; exit 1; }
done <<<"$served"
if ! grep -qx list <<<"$offered" || ! grep -qx describe <<<"$offered"; then
    echo "install: zsh's completion does not offer list and describe; it offers: $offered" >&2; exit 1
fi
completed=$(zsh_complete 'tkcall --ti')
[ "$completed" = $'tkcall --timeout \n--timeout' ] ||
    { echo "install: zsh's completion of 'tkcall --ti' gives: $completed" >&2; exit 1; }
offered=$(zsh_offered 'tkcall -o ' | sort | tr '\n' ' ')
[ "$offered" = "compact json long text " ] ||
    { echo "install: zsh's completion of -o offers: $offered" >&2; exit 1; }
completed=$(zsh_complete 'tkcall tk.v1.Control/Ping -d ')
[ "$completed" = $'tkcall tk.v1.Control/Ping -d {"data":\n{"data":' ] ||
    { echo "install: zsh's completion of -d for Ping gives: $completed" >&2; exit 1; }
# A method's name in the forms tkcall takes, in any case; after -d the
# fields the object has not got yet (Git/Log's: those bash offers).
completed=$(zsh_complete 'tkcall Git/S')
[ "$completed" = $'tkcall Git/Status \nGit/Status' ] ||
    { echo "install: zsh's completion of 'tkcall Git/S' gives: $completed" >&2; exit 1; }
completed=$(zsh_complete 'tkcall git/s')
[ "$completed" = $'tkcall Git/Status \nGit/Status' ] ||
    { echo "install: zsh's completion of 'tkcall git/s' gives: $completed" >&2; exit 1; }
completed=$(zsh_complete 'tkcall tk.v1.Git.S')
[ "$completed" = $'tkcall tk.v1.Git.Status \ntk.v1.Git.Status' ] ||
    { echo "install: zsh's completion of 'tkcall tk.v1.Git.S' gives: $completed" >&2; exit 1; }
offered=$(zsh_offered "tkcall Git/Log -d $typed" | sort | tr '\n' ' ')
want=$(sed "s/'{/$typed/g; s/$typed\"repo\": //; s/'//g" <<<"$log_fields")
[ "$offered" = "$want" ] ||
    { echo "install: zsh's completion of -d $typed for Git/Log offers: $offered, not $want" >&2; exit 1; }
echo "install: ok ($out)"
