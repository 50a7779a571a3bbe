#!/usr/bin/env bash
# test_man.sh - the nvfp4(1) man page generated from the --help texts
# (mk/man.sh) has a section per command holding that command's --help, and
# renders without troff warnings; the bash completion
# (tools/nvfp4-completion.bash) completes commands, options, recipe and
# study names from the program itself.
set -u
NVFP4=${NVFP4:?set NVFP4 to the nvfp4 binary}
here=$(cd "$(dirname "$0")/../.." && pwd)
fails=0
fail() { echo "FAIL test_man: $*"; fails=$((fails + 1)); }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

sh "$here/mk/man.sh" "$NVFP4" 9.9.9 > "$T/nvfp4.1" || fail "mk/man.sh: exit $?"
head -n 1 "$T/nvfp4.1" | grep -q '^\.TH NVFP4 1 .*nvfp4kit 9.9.9' || fail "no .TH line: $(head -n 1 "$T/nvfp4.1")"
cmds=$("$NVFP4" help | sed -n '/^commands:/,/^$/p' | awk 'NF > 1 && $1 != "commands:" {print $1}')
for c in $cmds; do
    grep -qx ".SS $c" "$T/nvfp4.1" || fail "no section for $c"
    first=$("$NVFP4" "$c" --help | head -n 1 | sed -e 's/\\/\\e/g')
    grep -qF -- "$first" "$T/nvfp4.1" || fail "the page lacks the first line of $c --help"
done
if command -v groff >/dev/null 2>&1; then
    groff -man -Tutf8 -ww "$T/nvfp4.1" > "$T/page" 2> "$T/warn" || fail "groff: exit $?"
    [ -s "$T/warn" ] && fail "groff warns: $(head -n 3 "$T/warn")"
    grep -q 'nvfp4 verify --expected BUNDLE' "$T/page" || fail "rendered page lacks verify's usage"
else
    echo "test_man: groff not found, skipping the rendering check"
fi

# completion: call the function as bash would
complete_words() { # words... (the last one is being completed)
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    COMPREPLY=()
    _nvfp4
    printf '%s\n' "${COMPREPLY[@]}"
}
# shellcheck source=/dev/null
source "$here/tools/nvfp4-completion.bash"
got=$(complete_words "$NVFP4" ver | tr '\n' ' ')
[ "$got" = "verify version " ] || fail "completion of 'ver': $got"
got=$(complete_words "$NVFP4" help expl | tr '\n' ' ')
[ "$got" = "explain explain-block " ] || fail "completion of 'help expl': $got"
got=$(complete_words "$NVFP4" quantize --col | tr '\n' ' ')
[ "$got" = "--columnwise --columnwise-only " ] || fail "completion of 'quantize --col': $got"
got=$(complete_words "$NVFP4" quantize --recipe torch | tr '\n' ' ')
grep -q "^torchao " <<<"$got" || fail "completion of '--recipe torch': $got"
got=$(complete_words "$NVFP4" study run s3- | tr '\n' ' ')
grep -q "s3-2d" <<<"$got" || fail "completion of 'study run s3-': $got"
got=$(complete_words "$NVFP4" table --format e | tr '\n' ' ')
[ "$got" = "e2m1 e4m3 " ] || fail "completion of '--format e': $got"

[ $fails = 0 ] && echo "test_man: ok"
exit $((fails > 0))
