# test_deb.sh — `make deb` builds a Debian package that holds everything
# `make install` does, and, when this runs as root with apt and slaq is not
# already installed, the package installs with `apt-get install ./slaq_*.deb`,
# its slaqd reads /etc/slaq/slaqd.conf, runs a job that the slaq command
# (finding the service's socket itself) submits and watches, and
# `apt-get purge` removes it all. SLAQ_TEST_DEB_INSTALL=0 skips the install.
. "$(dirname "$0")/lib.sh"

want=$(sed -n 's/^#define SLAQ_VERSION "\(.*\)"$/\1/p' include/slaq/version.h)
arch=$(dpkg --print-architecture)
DEB="$SLAQ_BUILD/slaq_${want}_${arch}.deb"
rm -f "$DEB"
check "make deb" make --no-print-directory BUILD="$SLAQ_BUILD" deb \
  >"$TMP/deb.log" 2>&1 || sed 's/^/#   /' "$TMP/deb.log" | tail -n 20
check "the package is $DEB" test -s "$DEB"

dpkg-deb -I "$DEB" >"$TMP/info" 2>&1
check_grep "Package: slaq" "^ Package: slaq$" "$TMP/info"
check_grep "Version: $want" "^ Version: $want$" "$TMP/info"
check_grep "Depends on the shared libraries (libgsl, libmicrohttpd)" \
  "^ Depends: .*libgsl.*libmicrohttpd" "$TMP/info"
check_grep "Depends on libjs-chart.js (the dashboard)" "libjs-chart\.js" "$TMP/info"
dpkg-deb -c "$DEB" | awk '{print $6}' >"$TMP/files"
for f in ./usr/bin/slaq ./usr/bin/slaqd ./usr/bin/slaq-train \
         ./usr/lib/libslaq-client.so.$want ./usr/lib/pkgconfig/slaq-client.pc \
         ./usr/include/slaq/client.h ./usr/share/man/man8/slaqd.8 \
         ./usr/share/man/man1/slaq-submit.1 ./lib/systemd/system/slaqd.service \
         ./usr/lib/python3/dist-packages/slaq/client.py ./etc/slaq/slaqd.conf \
         ./usr/share/doc/slaq/copyright; do
  check_grep "package holds ${f#.}" "^${f//./\\.}$" "$TMP/files"
done
dpkg-deb --ctrl-tarfile "$DEB" | tar -xO ./conffiles >"$TMP/conffiles" 2>/dev/null
check_grep "/etc/slaq/slaqd.conf is a conffile" "^/etc/slaq/slaqd\.conf$" "$TMP/conffiles"

# The unpacked programs run (the Debian build is configured for /usr).
dpkg-deb -x "$DEB" "$TMP/x"
check "unpacked slaq --version" test "$("$TMP/x/usr/bin/slaq" --version)" = "slaq $want"
check "unpacked slaqd --version" test "$("$TMP/x/usr/bin/slaqd" --version)" = "slaqd $want"

skip_install() {
  ok "apt-get install ./$(basename "$DEB") # SKIP $1"
  finish; exit $?
}
[[ ${SLAQ_TEST_DEB_INSTALL:-1} != 0 ]] || skip_install "SLAQ_TEST_DEB_INSTALL=0"
[[ $(id -u) -eq 0 ]] || skip_install "needs root"
command -v apt-get >/dev/null || skip_install "no apt-get"
# One package install at a time on this machine, and never over an
# installation this test did not make.
exec 9>/tmp/slaq-test-deb.lock
flock -w 900 9 || skip_install "another test holds /tmp/slaq-test-deb.lock"
dpkg-query -W -f='${db:Status-Status}' slaq 2>/dev/null | grep -q '^installed' &&
  skip_install "slaq is already installed here; not replacing it"

slaqd_pid=""
cleanup() {
  [[ -n "$slaqd_pid" ]] && kill "$slaqd_pid" 2>/dev/null && wait "$slaqd_pid" 2>/dev/null
  apt-get -o DPkg::Lock::Timeout=900 purge -y -q slaq >/dev/null 2>&1
  rm -rf "$TMP"
}
trap cleanup EXIT

apt-get -o DPkg::Lock::Timeout=900 install -y -q "$(realpath "$DEB")" \
  >"$TMP/apt.log" 2>&1
check "apt-get install ./$(basename "$DEB")" test $? -eq 0 ||
  tail -n 10 "$TMP/apt.log" | sed 's/^/#   /'
check "slaq --version from /usr/bin" test "$(/usr/bin/slaq --version)" = "slaq $want"
check "man slaqd is installed" bash -c "man -w slaqd >/dev/null"
check "/usr/bin/python3 imports slaq" \
  env -u PYTHONPATH /usr/bin/python3 -c 'import slaq; assert slaq.__file__.startswith("/usr/lib/python3/dist-packages/")'

# The installed slaqd, as the service runs it but without systemd: it
# reads /etc/slaq/slaqd.conf by itself (state /var/lib/slaq, socket
# /run/slaq/slaq.sock); a free HTTP port on the command line.
mkdir -p "$TMP/cwd" && cd "$TMP/cwd"
/usr/bin/slaqd --http 127.0.0.1:0 --enforce none --epoch 0.2 \
  2>"$TMP/slaqd.log" &
slaqd_pid=$!
for _ in $(seq 100); do
  [[ -S /run/slaq/slaq.sock ]] && /usr/bin/slaq status >/dev/null 2>&1 && break
  sleep 0.1
done
check_grep "slaqd read /etc/slaq/slaqd.conf" "configuration: /etc/slaq/slaqd\.conf" "$TMP/slaqd.log"
/usr/bin/slaq status >"$TMP/status" 2>&1
check "slaq status finds the service's socket" test $? -eq 0
check_grep "state dir /var/lib/slaq" "^state dir +/var/lib/slaq$" "$TMP/status"
id=$(/usr/bin/slaq submit --name debjob -- /usr/bin/slaq-toy-job --iters 30 --iter-cpu 0.005 2>"$TMP/submit.err")
check "slaq submit prints a job id ($id)" test -n "$id"
state=""
for _ in $(seq 150); do
  state=$(/usr/bin/slaq show "$id" --json 2>/dev/null |
          /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])' 2>/dev/null)
  [[ $state == done || $state == failed ]] && break
  sleep 0.2
done
check "the job ran to the end (state $state)" test "$state" = done
kill "$slaqd_pid"; wait "$slaqd_pid"
check "slaqd exits 0 on SIGTERM" test $? -eq 0
slaqd_pid=""
cd - >/dev/null

apt-get -o DPkg::Lock::Timeout=900 purge -y -q slaq >"$TMP/purge.log" 2>&1
check "apt-get purge slaq" test $? -eq 0
check "purge removes /usr/bin/slaqd" test ! -e /usr/bin/slaqd
check "purge removes /etc/slaq/slaqd.conf" test ! -e /etc/slaq/slaqd.conf
check "purge removes /var/lib/slaq" test ! -e /var/lib/slaq
finish
