# SPDX-License-Identifier: MIT
# bash completion of tkcall (installed as .../bash-completion/completions/tkcall).
# It asks tkcall itself, so that it never says other than tkcall does:
#   flags      from `tkcall --help`
#   methods    from `tkcall list` (what tkd serves, at the --addr on the
#              line or TK_ADDR), in every form tkcall takes: in full
#              (tk.v1.Git/Status), grpcurl's (tk.v1.Git.Status, .tk.v1...)
#              and any tail that names one (Git/Status, ping); `list`
#              takes a service, `describe` any name
#   --node     a fleet's node ids, from `tkcall Control/ListNodes`
#   after -d   the request's fields as JSON names ({"repo":), from
#              `tkcall describe METHOD`, which needs no tkd, less those the
#              object already has ({"repo":".", offers no repo)
# shellcheck shell=bash

# The JSON names of METHOD's request fields, one a line.
_tkcall_fields() {
    "$1" describe "$2" 2>/dev/null | awk '
        /^message / { n++ }
        n == 1 && /^ +[A-Za-z].* = [0-9]+;/ {
            decl = $0
            sub(/ = .*/, "", decl)
            words = split(decl, w, " ")
            if (words < 2) next # a value of an enum
            json = w[words]
            if (match($0, /JSON: [A-Za-z0-9_]+/))
                json = substr($0, RSTART + 6, RLENGTH - 6)
            print json
        }
        n == 2 { exit }'
}

# The names on stdin (one a line, in full) that begin the word CUR, in the
# forms tkcall takes them (client/tkcall/names.c): the full names for an
# empty word; else every tail on a '.' or '/' that ends one name only
# (Git/Status, v1.Git/Status, Ping, not Status, which two methods end
# with), or grpcurl's '.' for '/' when none fits; a leading '.' kept.
# Bash matches in the case tkcall list prints; zsh passes TKCALL_ICASE=1
# and leaves the case to its own matchers.
_tkcall_names() {
    TKCALL_CUR=$1 awk '
    function tails(name, full,    i, c) {
        add(name, full)
        for (i = 1; i < length(name); i++) {
            c = substr(name, i, 1)
            if (c == "." || c == "/")
                add(substr(name, i + 1), full)
        }
    }
    function add(form, full,    k) {
        k = tolower(form)
        if (!(k in owner)) {
            owner[k] = full
            order[++n] = form
        } else if (owner[k] != full)
            owner[k] = "" # two names end so: tkcall asks which
    }
    function fold(s) { return ENVIRON["TKCALL_ICASE"] ? tolower(s) : s }
    function begins(form) {
        return fold(substr(form, 1, length(cur))) == fold(cur)
    }
    BEGIN {
        cur = ENVIRON["TKCALL_CUR"]
        if (substr(cur, 1, 1) == ".") { # grpcurl writes .tk.v1.Git/Status
            lead = "."
            cur = substr(cur, 2)
        }
    }
    NF == 1 { full[++names] = $1 }
    END {
        for (i = 1; i <= names; i++) {
            if (cur == "")
                print lead full[i]
            else
                tails(full[i], full[i])
        }
        if (cur == "") exit
        for (i = 1; i <= n; i++)
            if (owner[tolower(order[i])] != "" && begins(order[i])) {
                print lead order[i]
                found++
            }
        if (found) exit
        # The form of grpcurl, a dot for the slash, only when no other fits.
        for (i = 1; i <= names; i++) {
            dotted = full[i]
            sub(/\//, ".", dotted)
            tails(dotted, full[i])
        }
        for (i = 1; i <= n; i++)
            if (owner[tolower(order[i])] != "" && begins(order[i]))
                print lead order[i]
    }
'
}

# Where the word CUR (what follows -d) is in its JSON object: nothing when
# no key may begin there (inside a string, a value, a nested object or
# array); else a line with CUR up to where the key begins, then the keys
# the top-level object already has, one a line.
_tkcall_object() {
    TKCALL_CUR=$1 awk '
    BEGIN {
        s = ENVIRON["TKCALL_CUR"]
        if (substr(s, 1, 1) == "\047") { # a quote opens the word
            quote = "\047"
            s = substr(s, 2)
        }
        if (s ~ /^[ \t\r\n]*$/) { # nothing yet: the opening of the object
            print quote s "{"
            exit
        }
        # depth of {} and []; expect: a key may begin here, at start; a
        # string begun there is a key (keying), pending until its colon
        # follows, when the object has it.
        len = length(s)
        for (i = 1; i <= len; i++) {
            c = substr(s, i, 1)
            if (instr) {
                if (esc) esc = 0
                else if (c == "\\") esc = 1
                else if (c == "\"") instr = 0
                if (instr && keying) key = key c
                else if (!instr && keying) { pending = key; keying = 0 }
                continue
            }
            if (c ~ /[ \t\r\n]/) continue
            if (c == "\"") {
                instr = 1
                keying = depth == 1 && expect
                if (keying) { start = i; key = "" }
                expect = 0
                continue
            }
            if (depth == 0 && c != "{") exit # not an object: no fields
            if (c == ":" && depth == 1 && pending != "") keys[pending] = 1
            pending = ""
            expect = 0
            if (c == "{" || c == "[") {
                depth++
                if (depth == 1) { expect = 1; start = i + 1 }
            } else if (c == "}" || c == "]") {
                depth--
            } else if (c == "," && depth == 1) {
                expect = 1
                start = i + 1
            }
        }
        # Inside the top-level object, where a key begins or is being typed
        # (an open string, or a closed one with nothing after it).
        if (depth != 1 || !(expect || (instr && keying) || (pending != "" && substr(s, len, 1) == "\"")))
            exit
        if (expect) start = len + 1
        print quote substr(s, 1, start - 1)
        for (k in keys) print k
    }
'
}

_tkcall() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    local prog=${COMP_WORDS[0]} i word cmd="" method=""
    local -a addr=()
    for ((i = 1; i < COMP_CWORD; i++)); do
        word=${COMP_WORDS[i]}
        case $word in
            -a | --addr) addr=(--addr "${COMP_WORDS[i + 1]}"); ((i++)) ;;
            --addr=*) addr=("$word") ;;
            -t | --timeout | -d | --data | --cacert | --cert | --key | -o | --output | --color | --node) ((i++)) ;;
            -*) ;;
            *) if [ -z "$cmd" ]; then cmd=$word; else method=$word; fi ;;
        esac
    done
    case $prev in
        -a | --addr | --cacert | --cert | --key)
            mapfile -t COMPREPLY < <(compgen -f -- "$cur")
            return
            ;;
        --node)
            mapfile -t COMPREPLY < <(compgen -W "$("$prog" "${addr[@]}" -o text Control/ListNodes 2>/dev/null |
                awk '$2 ~ /:\/\// { sub(/\*$/, "", $1); print $1 }')" -- "$cur")
            return
            ;;
        -t | --timeout)
            mapfile -t COMPREPLY < <(compgen -W "500ms 5s 30s 2m 0" -- "$cur")
            return
            ;;
        -o | --output)
            mapfile -t COMPREPLY < <(compgen -W "text long json compact" -- "$cur")
            return
            ;;
        --color)
            mapfile -t COMPREPLY < <(compgen -W "auto always never" -- "$cur")
            return
            ;;
        -d | --data)
            # The method may come after -d: look on the whole line.
            for ((i = COMP_CWORD + 1; i < ${#COMP_WORDS[@]}; i++)); do
                [[ ${COMP_WORDS[i]} == -* ]] || { cmd=${COMP_WORDS[i]}; break; }
            done
            [ -n "$cmd" ] || return
            local f prefix
            local -a where
            mapfile -t where < <(_tkcall_object "$cur")
            [ ${#where[@]} -gt 0 ] || return
            prefix=${where[0]}
            COMPREPLY=()
            while IFS= read -r f; do
                for word in "${where[@]:1}"; do
                    [ "$word" != "$f" ] || continue 2
                done
                [[ $prefix\"$f\": == "$cur"* ]] && COMPREPLY+=("$prefix\"$f\":")
            done < <(_tkcall_fields "$prog" "$cmd")
            compopt -o nospace 2>/dev/null
            return
            ;;
    esac
    if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$("$prog" --help 2>/dev/null |
            grep -oE -- '--[a-z][a-z-]*' | sort -u)" -- "$cur")
        return
    fi
    local methods
    methods=$("$prog" "${addr[@]}" list 2>/dev/null)
    case $cmd in
        "")
            mapfile -t COMPREPLY < <(compgen -W "list describe" -- "$cur")
            mapfile -t -O ${#COMPREPLY[@]} COMPREPLY < <(_tkcall_names "$cur" <<<"$methods")
            ;;
        list) [ -n "$method" ] || mapfile -t COMPREPLY < <(printf '%s\n' "$methods" | sed 's|/.*||' | sort -u | _tkcall_names "$cur") ;;
        describe) [ -n "$method" ] || mapfile -t COMPREPLY < <(_tkcall_names "$cur" <<<"$methods") ;;
    esac
}
complete -F _tkcall tkcall
