# test_completion.sh — dist/slaq.bash-completion completes what the
# programs take: subcommands, options and every share policy (read from
# the programs' own --help, so no list drifts).
. "$(dirname "$0")/lib.sh"

complete_words() {  # FUNC WORD... -> the completions of the last word
  PATH="$SLAQ_BUILD/bin:$PATH" bash -c '
    . dist/slaq.bash-completion
    f=$1; shift
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
    compopt() { :; }
    "$f"
    printf "%s\n" "${COMPREPLY[@]}"' _ "$@" | sort | tr '\n' ' '
}

all="edf fair mlfs mlfs-h mlfs-rl queue relaqs shortest-first slaq slaq-index slaq-maxmin slaq-plan slaq-trend tiresias "
got=$(complete_words _slaqd slaqd --policy "")
check "slaqd --policy completes every share policy (got: $got)" \
  test "$got" = "$all"
got=$(complete_words _slaq slaq sim --policy ml)
check "slaq sim --policy ml completes the MLFS policies (got: $got)" \
  test "$got" = "mlfs mlfs-h mlfs-rl "
got=$(complete_words _slaq slaq pol)
check "slaq pol completes the policy command (got: $got)" \
  test "$got" = "policy "
got=$(complete_words _slaqd slaqd --ho)
check "slaqd --ho completes slaqd's options from its --help (got: $got)" \
  grep -q -- "--hold" <<<"$got"
got=$(complete_words _slaq slaq account "")
check "slaq account completes its verbs (got: $got)" \
  test "$got" = "add ls set "
got=$(complete_words _slaqd slaqd --fair-share "")
check "slaqd --fair-share completes on and off (got: $got)" \
  test "$got" = "off on "
mkdir -p "$TMP/runs/demo"
got=$(complete_words _slaq slaq report "$TMP/runs/de")
check "slaq report completes a state directory (got: $got)" \
  test "$got" = "$TMP/runs/demo "
got=$(complete_words _slaq slaq report --ti)
check "slaq report --ti completes --timeline from its --help (got: $got)" \
  test "$got" = "--timeline "
got=$(complete_words _slaq slaq rep)
check "slaq rep completes replay and report (got: $got)" \
  test "$got" = "replay report "
finish
