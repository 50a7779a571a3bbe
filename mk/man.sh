#!/bin/sh
# mk/man.sh NVFP4 VERSION - writes the nvfp4(1) man page to stdout, made from
# the program's own help texts (`nvfp4 help` and `nvfp4 CMD --help`), so the
# page cannot disagree with --help. Used by mk/man.mk.
set -eu
nvfp4=$1
version=$2
# troff-safe text: backslashes as \e, a leading . or ' escaped with \&
esc() { sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"; }
commands=$("$nvfp4" help | sed -n '/^commands:/,/^$/p' | awk 'NF > 1 && $1 != "commands:" {print $1}')
[ -n "$commands" ] || { echo "mk/man.sh: $nvfp4 help lists no commands" >&2; exit 2; }
cat <<HEAD
.TH NVFP4 1 "" "nvfp4kit $version" "User Commands"
.SH NAME
nvfp4 \\- a bit-exact reference for NVIDIA's NVFP4 4-bit format: codecs, quantization recipes, kernel verifier, studies
.SH SYNOPSIS
.B nvfp4
.I COMMAND
.RI [ OPTIONS ]
.br
.B nvfp4 help
.I COMMAND
.SH DESCRIPTION
HEAD
echo ".nf"
"$nvfp4" help | esc
echo ".fi"
echo ".SH COMMANDS"
for c in $commands; do
    echo ".SS $c"
    echo ".nf"
    "$nvfp4" "$c" --help | esc
    echo ".fi"
done
cat <<'TAIL'
.SH EXIT STATUS
0 success or match, 1 mismatch, 2 usage or input error.
.SH FILES
The bash completion is installed as share/bash-completion/completions/nvfp4.
.SH SEE ALSO
The repository's README.md and docs/ (tutorial.md, semantics.md, verify.md, studies.md, file-formats.md).
TAIL
