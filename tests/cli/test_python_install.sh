# test_python_install.sh — the Python client installs with pip from the
# repository and no package index (python/backend/slaq_build.py, the
# in-tree build backend): a plain and an editable install into a virtual
# environment with every index unreachable, the wheel's metadata from
# pyproject.toml, the training-loop helpers among its modules, and the
# same sources giving the same wheel bytes.
. "$(dirname "$0")/lib.sh"

py=$(command -v python3)
if ! "$py" -c 'import venv, ensurepip' 2>/dev/null; then
  echo "ok 1 - # SKIP $py has no venv/ensurepip (Debian: python3-venv)"
  finish; exit
fi
want=$(sed -n 's/^#define SLAQ_VERSION "\(.*\)"$/\1/p' include/slaq/version.h)
# Any attempt to reach an index fails at once.
export PIP_INDEX_URL=http://127.0.0.1:9/simple PIP_NO_INDEX=1 \
  PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1

check_exit "a virtual environment" 0 "$py" -m venv "$TMP/venv"
pip=("$TMP/venv/bin/python" -m pip)
check_exit "pip install ./python with no index" 0 "${pip[@]}" install ./python
out=$(cd "$TMP" && "$TMP/venv/bin/python" -c \
  'import slaq, importlib.metadata as m; print(m.version("slaq"), slaq.__version__, slaq.__file__)')
check "the installed module imports, version $want ($out)" \
  test "${out%% /*}" = "$want $want"
check "it was copied into the environment, not found in the checkout" \
  grep -q "$TMP/venv/" <<<"$out"
check "the control API is installed (slaq.Scheduler, slaq.sealed)" \
  bash -c 'cd "$1" && "$1/venv/bin/python" -c "import slaq, slaq.sealed; slaq.Scheduler; slaq.PermissionDenied"' _ "$TMP"
out=$(cd "$TMP" && "$TMP/venv/bin/python" -m slaq --help 2>&1)
check "python -m slaq runs from the install and lists its verbs" \
  test "$(grep -cE '^    (submit|ls|show|history|cancel|suspend|resume|policy|status|wait) ' <<<"$out")" = 10
# The helpers are installed too; in a venv without the libraries, using
# one fails with an error that says what to install, and `import slaq`
# still works (it imports none of them).
out=$(cd "$TMP" && "$TMP/venv/bin/python" -c '
import slaq, slaq.loop
try:
    import slaq.xgboost
except ImportError as e:
    print(e)' 2>&1)
check "slaq.xgboost is installed and names its package when xgboost is missing ($out)" \
  grep -q "slaq.xgboost needs XGBoost (Debian: apt install python3-xgboost" <<<"$out"
check_exit "pip uninstall" 0 "${pip[@]}" uninstall -y slaq
check_exit "pip install -e ./python (editable) with no index" 0 \
  "${pip[@]}" install -e ./python
out=$(cd "$TMP" && "$TMP/venv/bin/python" -c 'import slaq; print(slaq.__file__)')
check "the editable install imports the checkout's module ($out)" \
  test "$out" = "$PWD/python/slaq/__init__.py"

mkdir -p "$TMP/w1" "$TMP/w2"
check_exit "pip wheel builds a wheel" 0 "${pip[@]}" wheel --no-deps -w "$TMP/w1" ./python
"${pip[@]}" wheel --no-deps -w "$TMP/w2" ./python >/dev/null 2>&1
whl=$(cd "$TMP/w1" && ls slaq-*.whl 2>/dev/null)
check "the wheel is slaq-$want-py3-none-any.whl ($whl)" \
  test "$whl" = "slaq-$want-py3-none-any.whl"
check "two builds of the same sources are the same bytes" \
  cmp -s "$TMP/w1/$whl" "$TMP/w2/$whl"
check "the wheel's METADATA carries pyproject.toml's fields" \
  "$py" - "$TMP/w1/$whl" "$want" <<'PY'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
meta = z.read("slaq-%s.dist-info/METADATA" % sys.argv[2]).decode()
need = ["Name: slaq", "Version: " + sys.argv[2], "Requires-Python: >=3.7",
        "License: GPL-3.0-or-later"]
missing = [n for n in need if n not in meta.splitlines()]
names = z.namelist()
mods = sorted(n for n in names if n.startswith("slaq/"))
print("# modules:", " ".join(mods))
helpers = ["slaq/%s.py" % m for m in
           ("client", "loop", "torch", "sklearn", "xgboost", "skorch",
            "scheduler", "sealed", "__main__")]
sys.exit(1 if missing or any(h not in mods for h in helpers) or
         any("__pycache__" in n for n in names) else 0)
PY
finish
