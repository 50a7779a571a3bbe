# bash completion for nvfp4 (installed as share/bash-completion/completions/nvfp4;
# or: source tools/nvfp4-completion.bash). Every list comes from the program
# itself, so it follows new commands and options: the commands from
# `nvfp4 help`, a command's options from `nvfp4 CMD --help`, recipe names
# from `nvfp4 table --recipes`, study names from `nvfp4 study list`.
_nvfp4()
{
    local cur prev prog cmd
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    prog=${COMP_WORDS[0]}
    if [ "$COMP_CWORD" -eq 1 ] || { [ "$COMP_CWORD" -eq 2 ] && [ "$prev" = help ]; }; then
        COMPREPLY=($(compgen -W "$("$prog" help 2>/dev/null | sed -n '/^commands:/,/^$/p' |
            awk 'NF > 1 && $1 != "commands:" {print $1}') help" -- "$cur"))
        return
    fi
    cmd=${COMP_WORDS[1]}
    case $prev in
    --recipe)
        COMPREPLY=($(compgen -W "$("$prog" table --recipes 2>/dev/null | awk 'NR > 1 && NF {print $1}')" -- "$cur"))
        return ;;
    --format | --from | --to)
        COMPREPLY=($(compgen -W "e2m1 e4m3 ue8m0 bf16 fp16" -- "$cur"))
        return ;;
    --round)
        COMPREPLY=($(compgen -W "rn rz sr" -- "$cur"))
        return ;;
    esac
    if [ "$cmd" = study ]; then
        if [ "$COMP_CWORD" -eq 2 ]; then
            COMPREPLY=($(compgen -W "list run plot merge" -- "$cur"))
            return
        fi
        if [ "$COMP_CWORD" -eq 3 ] && [ "$prev" = run ]; then
            COMPREPLY=($(compgen -W "$("$prog" study list 2>/dev/null | awk '{print $1}')" -- "$cur"))
            return
        fi
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$("$prog" "$cmd" --help 2>/dev/null | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)" -- "$cur"))
        return
    fi
    COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -F _nvfp4 nvfp4
