#!/bin/sh
# SPDX-License-Identifier: MIT
# Builds the repositories tests/integration/git/ works on, in DIR:
#   main/      history with a merge, an annotated and a light tag, commits of
#              equal dates (ties), a multi-paragraph message, paths with
#              spaces, non-ASCII and non-UTF-8 bytes, and a clone of itself
#              as upstream (ahead/behind)
#   clone/     a clone of main, one commit ahead and checked out detached
#              in its worktree "clone-detached"
#   unborn/    git init, nothing committed
#   bare.git   a bare clone of main
#   plain/     a directory that is no repository
#   hooks/     the scripts the lifetime tests install as hooks
# usage: git_fixture.sh DIR
set -eu
dir=$1
export GIT_CONFIG_NOSYSTEM=1 HOME="$dir/home" LC_ALL=C
mkdir -p "$HOME" "$dir/plain"
n=0
tick() { # distinct, increasing dates; "same" repeats the last one
    [ "${1:-}" = same ] || n=$((n + 1))
    GIT_AUTHOR_DATE="$((1700000000 + n * 60)) +0200"
    GIT_COMMITTER_DATE="$((1700000000 + n * 60)) -0130"
    export GIT_AUTHOR_DATE GIT_COMMITTER_DATE
}
commit() { tick "${2:-}"; git commit -q --allow-empty -m "$1"; }

git init -q -b main "$dir/main"
cd "$dir/main"
git config user.name "Tk Tester"
git config user.email tester@example.com
echo one >"a b.txt"
mkdir dir && echo x >dir/x
git add -A && commit "first commit"
printf 'caf\303\251\n' >"$(printf 'h\303\251llo.txt')"
git add -A && commit "add non-ASCII path"
git tag light
git checkout -q -b side
echo side >side.txt && git add side.txt && commit "side: a file"
echo more >>dir/x && git add dir/x && commit "side: touch dir/x"
git checkout -q main
# The same date as "side: touch dir/x": the merge's parents tie.
echo two >>"a b.txt" && git add -A && commit "second on main

The body explains.
It has two lines.

And a second paragraph." same
tick && git merge -q --no-ff -m "merge side" side
tick && git tag -a v1 -m "version one"
echo three >>"a b.txt" && git add -A && commit "tie one"
echo four >>"a b.txt" && git add -A && commit "tie two" same
printf 'bin\000ary needle\n' >bin.dat
printf 'needle -x here\nno match\nNEEDLE upper\n' >n.txt
printf 'odd\n' >"$(printf 'raw\377name.txt')"
git add -A && commit "  leading spaces subject
 continued line

body"
git checkout -q side
echo late >>side.txt && git add side.txt && commit "side: later"
git checkout -q main

git clone -q "$dir/main" "$dir/clone"
cd "$dir/clone"
git config user.name "Tk Tester"
git config user.email tester@example.com
echo ahead >ahead.txt && git add ahead.txt && commit "clone: ahead"
git worktree add -q --detach "$dir/clone-detached" HEAD~1

git init -q -b main "$dir/unborn"
git clone -q --bare "$dir/main" "$dir/bare.git"

mkdir -p "$dir/hooks"

# Two objects whose ids share their first 4 hex digits: a prefix libgit2
# and git both call ambiguous.
cd "$dir/main"
i=0
while [ $i -lt 600 ]; do echo "blob $i" >"$dir/home/b$i"; i=$((i + 1)); done
printf '%s\n' "$dir"/home/b* | git hash-object -w --stdin-paths | cut -c1-4 | sort |
    uniq -d | head -1 >"$dir/ambiguous-prefix"
rm -f "$dir"/home/b*
[ -s "$dir/ambiguous-prefix" ]
