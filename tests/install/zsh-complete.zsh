#!/usr/bin/env zsh
# SPDX-License-Identifier: MIT
# What zsh's completion of tkcall does for a command line, as a person at
# an interactive zsh would see it: tests/install/check.sh runs
#   zsh -f zsh-complete.zsh FPATH_DIR 'tkcall -o '
# with the installed tkcall on PATH and TK_ADDR set. It starts a real
# interactive zsh on a pseudo-terminal (zsh/zpty) with FPATH_DIR in fpath and
# compinit (and no global zshrc: -d), types the line and a Tab (bound to complete-word), then a key
# whose widget prints what the Tab offered and the line after it. It prints
#   line 1    the command line after the Tab (what complete-word inserted)
#   line 2-   the candidates the completion offered that match the word,
#             one a line (captured by a compadd that records, then adds)
# Every wait reads the pty until a marker appears, for at most 20 s; on a
# timeout it says so, with what the pty printed, and exits 1.
emulate -L zsh
setopt err_exit
zmodload zsh/zpty zsh/zselect

fdir=${1:?completion directory} line=${2:?command line}
zdot=$(mktemp -d)
trap 'zpty -d tkz 2>/dev/null; rm -rf -- $zdot' EXIT

# The interactive zsh's startup: compinit over FPATH_DIR, the capture, and
# a prompt to wait for. compadd with -O, -A or -D only computes (the
# completion system's own helpers use them); any other call is recorded,
# its matching words, and then made as it was.
cat >$zdot/.zshrc <<EOF
fpath=(${(q)fdir} \$fpath)
autoload -U compinit
compinit -u -d ${(q)zdot}/.zcompdump
typeset -ga tk_offered
compadd() {
  if [[ \${@[1,(i)(-|--)]} == *-[[:alpha:]]#[OAD]* ]]; then
    builtin compadd "\$@"
    return
  fi
  local -a hits
  builtin compadd -O hits "\$@"
  tk_offered+=(\$hits)
  builtin compadd "\$@"
}
# No listing after the Tab: it could ask "do you wish to see all" and
# take the next key for an answer.
tk-nolist() { compstate[list]= }
comppostfuncs=(tk-nolist)
tk-report() {
  zle -I
  print -r -- "<<tk-line>>\$BUFFER<<"
  print -rl -- "<<tk-offered>>" \$tk_offered "<<tk-end>>"
}
zle -N tk-report
bindkey -e
bindkey '^I' complete-word
bindkey '^X^R' tk-report
unsetopt beep
PS1='<<tk-prompt>> '
EOF

typeset -F SECONDS
typeset -g out=
# read_until PATTERN: read the pty into $out until $out matches PATTERN.
read_until() {
  local chunk deadline=$(( SECONDS + 20 ))
  until [[ $out == $~1 ]]; do
    if (( SECONDS > deadline )) || ! zpty -t tkz; then
      # Whatever is left, then the story.
      while zpty -r tkz chunk; do out+=$chunk; done
      print -r -- "zsh-complete: no ${1//\*} from the zsh on the pty within 20 s;" \
        "it printed:" >&2
      print -r -- ${out//$'\r'/} >&2
      exit 1
    fi
    zselect -t 100 -r $fd || true
    while zpty -r tkz chunk; do out+=$chunk; done
  done
}

zpty -b tkz "ZDOTDIR=${(q)zdot} HOME=${(q)zdot} TERM=dumb zsh -d -i"
fd=$REPLY
read_until '*<<tk-prompt>>*'
zpty -w -n tkz "$line"$'\t\C-x\C-r'
read_until '*<<tk-end>>*'

report=${${out//$'\r'/}#*<<tk-line>>}
print -r -- ${report%%<<$'\n'*}
report=${report#*$'\n'<<tk-offered>>$'\n'}
report=${report%%<<tk-end>>*}
print -rn -- $report
