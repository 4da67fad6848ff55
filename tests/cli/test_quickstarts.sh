# test_quickstarts.sh — the quick starts of README.md and docs/*.md run as
# written.
#
# The blocks: README.md's first ```sh block under "Using it", and the ```sh
# block of every section of docs/*.md whose title starts with "Quick start"
# (docs/cluster-runtime.md's needs Slurm, and is skipped without it). Each runs in bash, in a
# scratch directory that links the checkout's build/, examples/, tests/,
# data/, python/, docs/, scripts/ and contrib/ (so relative paths mean what
# they mean in a checkout),
# with build/bin on PATH (as after `make install`), stopping at the first
# command that fails. Three changes make an interactive session a script:
# after a command that ends in `&` (slaqd) the script waits until slaqd
# answers, as a user would before typing the next line; `slaq top` refreshes
# twice (-n 2) instead of until Ctrl-C; `xdg-open FILE` checks that FILE
# exists. Every slaqd a block started is stopped at the end, its jobs first.
. "$(dirname "$0")/lib.sh"

root=$PWD
bin=$(cd "$SLAQ_BUILD/bin" && pwd)

no_slaqd_in() {  # no slaqd runs with DIR as its working directory
  local p
  for p in $(pgrep -x slaqd); do
    [[ $(readlink "/proc/$p/cwd" 2>/dev/null) == "$1" ]] && return 1
  done
  return 0
}

python3 - "$TMP/blocks" README.md docs/*.md <<'PY'
import os, re, sys
out, files = sys.argv[1], sys.argv[2:]
os.makedirs(out, exist_ok=True)
n = 0
for path in files:
    text = open(path).read()
    want = "Using it" if path == "README.md" else "Quick start"
    for m in re.finditer(r"^(#+) (.*)$", text, re.M):
        if not m.group(2).strip().lower().startswith(want.lower()):
            continue
        body = text[m.end():]
        nxt = re.search(r"^#{1,%d} " % len(m.group(1)), body, re.M)
        body = body[:nxt.start()] if nxt else body
        block = re.search(r"```sh\n(.*?)```", body, re.S)
        if block:
            n += 1
            name = "%02d-%s" % (n, path.replace("/", "_"))
            open(os.path.join(out, name), "w").write(block.group(1))
PY
check "quick starts found in README.md and docs/ ($(ls "$TMP/blocks" | wc -l))" \
  test "$(ls "$TMP/blocks" | wc -l)" -ge 3

for block in "$TMP/blocks"/*; do
  name=$(basename "$block")
  if grep -q slurm-local.sh "$block" &&
     ! { command -v slurmctld || [ -x /usr/sbin/slurmctld ]; } >/dev/null; then
    ok "$name runs as written # SKIP no Slurm here (make deps installs it)"
    continue
  fi
  wd="$TMP/wd-$name"
  mkdir -p "$wd"
  for d in build examples tests data python docs scripts contrib; do
    ln -s "$root/$d" "$wd/$d"
  done
  # The block as a script: the prelude stops every slaqd it starts.
  {
    echo 'set -e'
    echo "export PATH='$bin':\$PATH"
    echo 'daemons=()'
    echo 'stop_daemons() {'
    # A block that stopped half-way leaves no cluster up behind it.
    echo "  [ -s slaq-cluster/jobid ] && '$bin/slaq' cluster down >/dev/null 2>&1 || true"
    grep -q slurm-local.sh "$block" &&
      echo "  '$root/scripts/slurm-local.sh' down >/dev/null 2>&1 || true"
    echo '  for p in "${daemons[@]}"; do'
    echo "    for id in \$('$bin/slaq' ls --json 2>/dev/null | python3 -c 'import json,sys; print(\" \".join(str(j[\"id\"]) for j in json.load(sys.stdin)[\"jobs\"] if j[\"state\"] in (\"running\",\"stopping\")))' 2>/dev/null); do"
    echo "      '$bin/slaq' cancel --now \"\$id\" >/dev/null 2>&1 || true"
    echo '    done'
    echo '    sleep 0.5; kill -TERM "$p" 2>/dev/null; wait "$p" 2>/dev/null || true'
    echo '  done'
    echo '}'
    echo 'trap stop_daemons EXIT'
    echo 'xdg-open() { test -e "$1"; }'
    python3 - "$block" "$bin" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().split("\n")
bin_ = sys.argv[2]
joined, cur = [], ""
for line in lines:  # join continuation lines
    cur += line
    if cur.endswith("\\"):
        cur = cur[:-1] + " "
        continue
    joined.append(cur)
    cur = ""
for line in joined:
    code = re.sub(r"\s+#.*$", "", line).rstrip()
    if not code:
        continue
    code = re.sub(r"(\bslaq top)\b", r"\1 -n 2", code)
    print(code)
    if code.endswith("&"):
        print("daemons+=($!)")
        # up to 60 s: a loaded machine has taken more than 10 s to start
        # slaqd (its database, its cgroups)
        print("for _ in $(seq 600); do '%s/slaq' status >/dev/null 2>&1 && break; "
              "sleep 0.1; done" % bin_)
PY
  } >"$wd/run.sh"
  (cd "$wd" && timeout 600 bash run.sh) >"$TMP/$name.out" 2>&1
  rc=$?
  check "$name runs as written (exit $rc)" test "$rc" -eq 0
  [ "$rc" -eq 0 ] || tail -n 8 "$TMP/$name.out" | sed 's/^/#   /'
  check "$name left no slaqd running" no_slaqd_in "$wd"
done
# The spec docs/sweep-cli.md shows is the example file itself.
check "docs/sweep-cli.md's spec is examples/sweeps/logreg-quick.json" \
  python3 - <<'PY'
import json, re
doc = open("docs/sweep-cli.md").read()
spec = re.search(r"## The spec\n\n```json\n(.*?)```", doc, re.S).group(1)
assert json.loads(spec) == json.load(open("examples/sweeps/logreg-quick.json"))
PY
finish
