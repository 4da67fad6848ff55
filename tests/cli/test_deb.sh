# test_deb.sh — `make deb` builds slaq's Debian packages from the build
# (slaq, libslaq0, libslaq-dev, python3-slaq, slaq-doc), lintian finds no
# errors in them, together they hold everything `make install` does; and,
# when this runs as root with apt and slaq is not already installed, they
# install with `apt-get install ./*.deb`: a C program builds against
# libslaq-client with pkg-config, /usr/bin/python3 imports the client,
# slaqd reads /etc/slaq/slaqd.conf and runs a job that the slaq command
# (finding the service's socket itself) submits and watches, and
# `apt-get purge` removes it all. SLAQ_TEST_DEB_INSTALL=0 skips the install.
. "$(dirname "$0")/lib.sh"

want=$(sed -n 's/^#define SLAQ_VERSION "\(.*\)"$/\1/p' include/slaq/version.h)
arch=$(dpkg --print-architecture)
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
PKGS=(slaq libslaq0 libslaq-dev python3-slaq slaq-doc)
deb_of() {  # deb_of PKG: its file in the build
  case $1 in python3-slaq|slaq-doc) echo "$SLAQ_BUILD/${1}_${want}_all.deb" ;;
  *) echo "$SLAQ_BUILD/${1}_${want}_${arch}.deb" ;; esac
}
for p in "${PKGS[@]}"; do rm -f "$(deb_of "$p")"; done
check "make deb" make --no-print-directory BUILD="$SLAQ_BUILD" deb \
  >"$TMP/deb.log" 2>&1 || sed 's/^/#   /' "$TMP/deb.log" | tail -n 20
DEBS=()
for p in "${PKGS[@]}"; do
  check "the package $(deb_of "$p")" test -s "$(deb_of "$p")"
  DEBS+=("$(deb_of "$p")")
done
DEB=$(deb_of slaq)

if command -v lintian >/dev/null; then
  lintian --fail-on error "${DEBS[@]}" >"$TMP/lintian" 2>&1
  check "lintian finds no errors in the five packages" test $? -eq 0 ||
    grep '^E:' "$TMP/lintian" | head -n 10 | sed 's/^/#   /'
  check "lintian finds no warnings either" \
    bash -c "! grep -q '^W:' '$TMP/lintian'" || grep '^W:' "$TMP/lintian" | head -n 5 | sed 's/^/#   /'
else
  ok "lintian # SKIP not installed (make deps installs it)"
fi

dpkg-deb -I "$DEB" >"$TMP/info" 2>&1
check_grep "Package: slaq" "^ Package: slaq$" "$TMP/info"
check_grep "Version: $want" "^ Version: $want$" "$TMP/info"
check_grep "Depends on the shared libraries (libgsl, libmicrohttpd)" \
  "^ Depends: .*libgsl.*libmicrohttpd" "$TMP/info"
check_grep "Depends on libjs-chart.js (the dashboard)" "libjs-chart\.js" "$TMP/info"
dpkg-deb -I "$(deb_of libslaq-dev)" >"$TMP/dev-info" 2>&1
check_grep "libslaq-dev depends on libslaq0 and what a static link needs" \
  "^ Depends: libslaq0 \(= $want\), libgsl-dev, libjansson-dev$" "$TMP/dev-info"
dpkg-deb --ctrl-tarfile "$(deb_of libslaq0)" | tar -xO ./triggers >"$TMP/triggers" 2>/dev/null
check_grep "libslaq0 triggers ldconfig" "^activate-noawait ldconfig$" "$TMP/triggers"

# where_is PKG FILE: FILE is in PKG's package.
where_is() {
  dpkg-deb -c "$(deb_of "$1")" | awk '{print $6}' >"$TMP/files"
  check_grep "$1 holds ${2#.}" "^${2//./\\.}$" "$TMP/files"
}
for f in ./usr/bin/slaq ./usr/bin/slaqd ./usr/bin/slaq-train ./usr/bin/slaq-toy-job \
         ./usr/share/man/man8/slaqd.8.gz ./usr/share/man/man1/slaq-submit.1.gz \
         ./usr/share/man/man1/slaq-toy-job.1.gz ./lib/systemd/system/slaqd.service \
         ./etc/slaq/slaqd.conf ./usr/share/doc/slaq/copyright \
         ./usr/share/slaq/mlfs-rl.model; do
  where_is slaq "$f"
done
where_is libslaq0 "./usr/lib/$ma/libslaq-client.so.$want"
where_is libslaq0 "./usr/lib/$ma/libslaq.so.$want"
for f in ./usr/include/slaq/client.h "./usr/lib/$ma/pkgconfig/slaq-client.pc" \
         "./usr/lib/$ma/libslaq-client.a"; do
  where_is libslaq-dev "$f"
done
for m in client loop torch sklearn xgboost skorch scheduler sealed __main__; do
  where_is python3-slaq "./usr/lib/python3/dist-packages/slaq/$m.py"
done
for f in ./usr/share/doc/slaq-doc/examples/sweeps/logreg-demo.json \
         ./usr/share/doc/slaq-doc/examples/toy_job.c ./usr/share/doc/slaq-doc/sweep-cli.md \
         ./usr/share/doc/slaq-doc/examples/prometheus/prometheus.yml \
         ./usr/share/doc/slaq-doc/examples/prometheus/slaq-rules.yml; do
  where_is slaq-doc "$f"
done
dpkg-deb --ctrl-tarfile "$DEB" | tar -xO ./conffiles >"$TMP/conffiles" 2>/dev/null
check_grep "/etc/slaq/slaqd.conf is a conffile" "^/etc/slaq/slaqd\.conf$" "$TMP/conffiles"
dpkg-deb -x "$DEB" "$TMP/x"
check "the manual pages name the packaged documentation's directory" \
  bash -c "zcat '$TMP/x/usr/share/man/man1/slaq.1.gz' | grep -q 'usr/share/doc/slaq-doc'"

# The unpacked programs run (the Debian build is configured for /usr).
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
  apt-get -o DPkg::Lock::Timeout=900 purge -y -q "${PKGS[@]}" >/dev/null 2>&1
  rm -rf "$TMP"
}
trap cleanup EXIT

apt-get -o DPkg::Lock::Timeout=900 install -y -q $(for d in "${DEBS[@]}"; do realpath "$d"; done) \
  >"$TMP/apt.log" 2>&1
check "apt-get install the five packages" test $? -eq 0 ||
  tail -n 10 "$TMP/apt.log" | sed 's/^/#   /'
check "slaq --version from /usr/bin" test "$(/usr/bin/slaq --version)" = "slaq $want"
check "man slaqd is installed" bash -c "man -w slaqd >/dev/null"
check "/usr/bin/python3 imports slaq" \
  env -u PYTHONPATH /usr/bin/python3 -c 'import slaq; assert slaq.__file__.startswith("/usr/lib/python3/dist-packages/")'
check "/usr/bin/python3 -m slaq (the control API's command line) runs" \
  bash -c 'cd / && env -u PYTHONPATH /usr/bin/python3 -m slaq ls --help | grep -q -- --socket'
# A job of one's own in C, built against the installed client library.
cat >"$TMP/job.c" <<'C'
#include <slaq/client.h>
#include <stdio.h>
int main(void)
{
    slaq_client *c = slaq_client_open();
    if (!c)
        return 1;
    printf("cores %.2f\n", slaq_client_cores(c));
    slaq_client_close(c);
    return 0;
}
C
check "a C job builds with pkg-config --cflags --libs slaq-client" \
  bash -c "cc -o '$TMP/job' '$TMP/job.c' \$(pkg-config --cflags --libs slaq-client)"
check "... and runs against libslaq-client.so.0 (no slaqd: the default share)" \
  bash -c "env -u SLAQ_SOCKET -u SLAQ_JOB_ID '$TMP/job' | grep -q '^cores [0-9]' && ldd '$TMP/job' | grep -qE 'libslaq-client.so.0 => (/usr)?/lib/$ma/'"
check "... and with the static library and pkg-config --static's flags" \
  bash -c "cc -o '$TMP/job-static' '$TMP/job.c' \$(pkg-config --cflags slaq-client) /usr/lib/$ma/libslaq-client.a \$(pkg-config --static --libs slaq-client | sed 's/-lslaq-client//') && ! ldd '$TMP/job-static' | grep -q libslaq-client"

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

apt-get -o DPkg::Lock::Timeout=900 purge -y -q "${PKGS[@]}" >"$TMP/purge.log" 2>&1
check "apt-get purge the five packages" test $? -eq 0
check "purge removes /usr/bin/slaqd" test ! -e /usr/bin/slaqd
check "purge removes /etc/slaq/slaqd.conf" test ! -e /etc/slaq/slaqd.conf
check "purge removes /var/lib/slaq" test ! -e /var/lib/slaq
finish
