# test_install.sh — `make install` into a DESTDIR puts every piece where
# Debian's tools look for it, a program builds against the installed
# libslaq-client through pkg-config, /usr/bin/python3 imports the installed
# module, and `make uninstall` takes it all away again.
. "$(dirname "$0")/lib.sh"

D="$TMP/root"
P=/usr/local
mk() { make --no-print-directory BUILD="$SLAQ_BUILD" DESTDIR="$D" "$@"; }
check "make install DESTDIR=..." mk install >"$TMP/install.log" 2>&1 ||
  tail -n 20 "$TMP/install.log" | sed 's/^/#   /'

for f in bin/slaq bin/slaqd bin/slaq-train bin/slaq-toy-job; do
  check "installed $P/$f (executable)" test -x "$D$P/$f"
done
check "installed slaq --version runs" "$D$P/bin/slaq" --version >/dev/null
for h in slaq.h client.h version.h; do
  check "header include/slaq/$h" test -f "$D$P/include/slaq/$h"
done
for l in libslaq libslaq-client; do
  check "$l.a" test -f "$D$P/lib/$l.a"
  check "$l.so -> $l.so.0 (symlink)" test -L "$D$P/lib/$l.so"
  check "$l.so.0 resolves to a file" test -f "$D$P/lib/$l.so.0"
  readelf -d "$D$P/lib/$l.so.0" >"$TMP/dyn" 2>&1
  check_grep "$l has soname $l.so.0" "SONAME.*\[$l\.so\.0\]" "$TMP/dyn"
done

# pkg-config finds both libraries (the sysroot maps /usr/local into DESTDIR).
pc() { PKG_CONFIG_PATH="$D$P/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$D" \
       pkg-config "$@"; }
want=$(sed -n 's/^#define SLAQ_VERSION "\(.*\)"$/\1/p' include/slaq/version.h)
check "pkg-config --modversion slaq-client = $want" \
  test "$(pc --modversion slaq-client)" = "$want"
check "pkg-config --modversion slaq = $want" test "$(pc --modversion slaq)" = "$want"
check "pkg-config --static --libs slaq names gsl" \
  bash -c "$(declare -f pc); D='$D' P='$P'; pc --static --libs slaq | grep -q -- -lgsl"

# The C example, built against the installed library only.
cc -o "$TMP/toy" examples/toy_job.c $(pc --cflags --libs slaq-client) \
  -lpthread -lm 2>"$TMP/cc.err"
check "examples/toy_job.c builds with pkg-config slaq-client" test -x "$TMP/toy"
sed 's/^/#   /' "$TMP/cc.err" | head -n 5
LD_LIBRARY_PATH="$D$P/lib" ldd "$TMP/toy" >"$TMP/ldd" 2>&1
check_grep "the example links the installed libslaq-client.so.0" \
  "libslaq-client\.so\.0 => $D$P/lib/libslaq-client\.so\.0" "$TMP/ldd"
check "the example runs (no slaqd: reports are dropped)" \
  env LD_LIBRARY_PATH="$D$P/lib" SLAQ_SOCKET="$TMP/none.sock" \
  "$TMP/toy" --iters 3 --iter-cpu 0.001

# Debian's python3 searches /usr/local/lib/python3.X/dist-packages for
# local installs; the module is there (the DESTDIR stands in for /).
if [[ -x /usr/bin/python3 ]]; then
  X=$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  PY="$P/lib/python$X/dist-packages"
  check "python module in $PY" test -f "$D$PY/slaq/client.py"
  check "/usr/bin/python3 searches $PY" \
    /usr/bin/python3 -c "import sys; assert '$PY' in sys.path"
  out=$(cd "$TMP" && PYTHONPATH="$D$PY" /usr/bin/python3 -c \
        'import slaq, slaq.client; print(slaq.__file__, slaq.__version__)')
  check "/usr/bin/python3 imports the installed slaq ($out)" \
    test "$out" = "$D$PY/slaq/__init__.py $want"
fi

# Manual pages: one per program and subcommand, valid roff.
cmds=$("$SLAQ" --help | sed -n '/^commands:/,/^$/s/^  \([a-z-]*\) .*/\1/p')
check "slaq --help lists its commands" test -n "$cmds"
pages="man1/slaq.1 man1/slaq-train.1 man8/slaqd.8"
for c in $cmds; do pages="$pages man1/slaq-$c.1"; done
for p in $pages; do
  f="$D$P/share/man/$p"
  check "man page $p" test -s "$f"
done
LC_ALL=C.UTF-8 MANWIDTH=80 man -l "$D$P/share/man/man1/slaq-show.1" >"$TMP/man" 2>&1
check_grep "man slaq-show renders its synopsis" "slaq show \[OPTIONS\] ID" "$TMP/man"
LC_ALL=C.UTF-8 MANWIDTH=80 man -l "$D$P/share/man/man8/slaqd.8" >"$TMP/man" 2>&1
check_grep "man slaqd lists --config" "--config" "$TMP/man"
check_grep "man slaqd describes the configuration file" "CONFIGURATION FILE" "$TMP/man"
groff -man -Tutf8 -ww -z "$D$P/share/man/man8/slaqd.8" 2>"$TMP/groff"
check "slaqd.8 has no roff warnings" test ! -s "$TMP/groff"
sed 's/^/#   /' "$TMP/groff" | head -n 5

# Bash completion, the service and the configuration.
C="$D$P/share/bash-completion/completions"
check "bash completion for slaq" bash -n "$C/slaq"
check "completion for slaqd and slaq-train (links)" test -L "$C/slaqd" -a -L "$C/slaq-train"
out=$(PATH="$D$P/bin:$PATH" bash -c ". '$C/slaq'; COMP_WORDS=(slaq sho); COMP_CWORD=1; _slaq; echo \${COMPREPLY[*]}")
check "completing 'slaq sho' gives show ($out)" test "$out" = show
out=$(PATH="$D$P/bin:$PATH" bash -c ". '$C/slaq'; COMP_WORDS=(slaq show --st); COMP_CWORD=2; _slaq; echo \${COMPREPLY[*]}")
check "completing 'slaq show --st' gives --state-dir ($out)" test "$out" = --state-dir
U="$D$P/lib/systemd/system/slaqd.service"
check "systemd unit installed" test -f "$U"
check_grep "the unit starts $P/bin/slaqd with /etc/slaq/slaqd.conf" \
  "^ExecStart=$P/bin/slaqd --config /etc/slaq/slaqd.conf" "$U"
check_grep "the unit keeps state in /var/lib/slaq" "^StateDirectory=slaq" "$U"
check_grep "the unit's socket is in /run/slaq" "^RuntimeDirectory=slaq" "$U"
check "configuration /etc/slaq/slaqd.conf" test -f "$D/etc/slaq/slaqd.conf"
check "MLF-RL's network, slaqd's default --rl-model" \
  cmp -s data/models/mlfs-rl.model "$D$P/share/slaq/mlfs-rl.model"

# Prometheus' example configuration and slaq's rules, side by side: the
# example loads the rules from its own directory.
E="$D$P/share/doc/slaq/examples/prometheus"
for f in prometheus.yml slaq-rules.yml; do
  check "example $P/share/doc/slaq/examples/prometheus/$f" \
    cmp -s "dist/prometheus/$f" "$E/$f"
done
if command -v promtool >/dev/null; then
  promtool check config "$E/prometheus.yml" >"$TMP/promtool" 2>&1
  check "promtool check config passes on the installed example and its rules" \
    test $? -eq 0 || sed 's/^/#   /' "$TMP/promtool" | head -n 10
  check_grep "... which loaded slaq-rules.yml" "slaq-rules.yml" "$TMP/promtool"
else
  ok "promtool check config # SKIP not installed (make deps installs prometheus)"
fi

# A second install keeps an edited configuration.
echo "policy = fair" >>"$D/etc/slaq/slaqd.conf"
mk install >/dev/null 2>&1
check_grep "reinstall keeps the edited configuration" "^policy = fair" "$D/etc/slaq/slaqd.conf"

check "make uninstall" mk uninstall >"$TMP/uninstall.log" 2>&1
find "$D" \( -type f -o -type l \) >"$TMP/left"
check "uninstall leaves only the edited configuration" \
  test "$(cat "$TMP/left")" = "$D/etc/slaq/slaqd.conf" ||
  sed 's/^/#   /' "$TMP/left" | head -n 10
finish
