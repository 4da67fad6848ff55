# test_help_columns.sh — every command that prints a table names each of
# its columns in its --help, so a reader of `slaq ls` or `slaq top` can
# find what REDUC or LOSS~ means without the docs.
. "$(dirname "$0")/lib.sh"

# columns CMD... -- HEADER...: CMD --help mentions every HEADER.
columns() {
  local cmd=() h
  while [[ $1 != -- ]]; do cmd+=("$1"); shift; done
  shift
  "$SLAQ" "${cmd[@]}" --help >"$TMP/help" 2>&1
  for h in "$@"; do
    check_grep "slaq ${cmd[*]} --help explains column $h" "(^|[^A-Z_])${h//\//\\/}([^A-Z_]|$)" "$TMP/help"
  done
}
columns ls -- ID USER NAME STATE NODE CORES ITER LOSS REDUC NOTE
columns top -- ID USER NAME STATE 'LOSS~' CORES ITER 'IT/S'
columns queue -- POS TASK WAIT EST REASON
columns show -- INDEX STATE JOB EXIT
columns history -- ITER LOSS CPU_S SAMPLES T METRIC
columns report -- ID USER NAME STATE T50_S T90_S T95_S JCT_S CPU_S REPORTS
columns sweep -- ID NAME STATE POLICY CFGS RUN/SUS/KIL/END ELAPSED TARGET BEST CFG CLASS P EPOCHS JOB PARAMS
finish
