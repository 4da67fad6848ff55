#!/usr/bin/env bash
# deb.sh — wrap a staged `make install PREFIX=/usr` tree into slaq's Debian
# package with dpkg-deb.
#
# Usage: scripts/deb.sh ROOT OUT_DIR
#
# ROOT is the DESTDIR of the install; this adds ROOT/DEBIAN (control with
# the shared-library dependencies dpkg-shlibdeps finds, conffiles, and the
# maintainer scripts) and writes OUT_DIR/slaq_VERSION_ARCH.deb, printing
# its path.
set -euo pipefail

root=${1:?usage: deb.sh ROOT OUT_DIR}
out=${2:?usage: deb.sh ROOT OUT_DIR}
src=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$root" && pwd)
version=$(sed -n 's/^#define SLAQ_VERSION "\(.*\)"$/\1/p' "$src/include/slaq/version.h")
arch=$(dpkg --print-architecture)

# Shared-library dependencies of every ELF file, the Debian way.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/debian"
printf 'Source: slaq\n\nPackage: slaq\nArchitecture: any\n' >"$work/debian/control"
elves=()
while IFS= read -r f; do
  file -b "$f" | grep -q '^ELF' && elves+=("$f")
done < <(find "$root/usr/bin" "$root/usr/lib" -maxdepth 1 -type f)
shlibs=$(cd "$work" && dpkg-shlibdeps -O -l"$root/usr/lib" "${elves[@]}" 2>"$work/warn" |
         sed -n 's/^shlibs:Depends=//p')
grep -v 'warning: binaries to analyze should already be' \
  "$work/warn" >&2 || true
[[ -n "$shlibs" ]] || { echo "deb.sh: dpkg-shlibdeps found no dependencies" >&2; exit 1; }

mkdir -p "$root/DEBIAN"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<CONTROL
Package: slaq
Version: $version
Architecture: $arch
Maintainer: slaq developers <slaq@localhost>
Installed-Size: $size
Section: science
Priority: optional
Depends: $shlibs, libjs-chart.js
Recommends: python3, gnuplot-nox, dataset-fashion-mnist
Description: quality-driven scheduler for machine-learning training jobs
 slaq shares a machine's CPUs among iterative training jobs by how much
 each job's loss is predicted to fall, after SLAQ (SoCC'17): jobs that can
 still improve a lot get more cores, nearly converged ones fewer.
 .
 This package holds slaqd (the daemon and its web dashboard, with a
 systemd unit), the slaq command (submit, ls, show, top, cancel, logs,
 policy, status; the simulator sim and workload gen; predict-eval and
 bench), slaq-train (real training jobs), the libslaq and libslaq-client
 libraries with headers and pkg-config files, and the Python client.
CONTROL
cat >"$root/usr/share/doc/slaq/copyright" <<'COPYRIGHT'
slaq: a quality-driven scheduler for machine-learning training jobs.

License: GPL-3.0-or-later (slaq links GSL, which is GPL)
 This program is free software: you can redistribute it and/or modify it
 under the terms of the GNU General Public License as published by the
 Free Software Foundation, either version 3 of the License, or (at your
 option) any later version.
 .
 On Debian systems, the complete text of the GNU General Public License
 version 3 can be found in /usr/share/common-licenses/GPL-3.
COPYRIGHT
# dpkg keeps an administrator's edits to these across upgrades.
(cd "$root" && find etc -type f | sed 's|^|/|') >"$root/DEBIAN/conffiles"

cat >"$root/DEBIAN/postinst" <<'SCRIPT'
#!/bin/sh
# The service is installed but not started: `systemctl enable --now slaqd`.
set -e
if [ "$1" = configure ] && [ -d /run/systemd/system ]; then
    systemctl daemon-reload || true
fi
SCRIPT
cat >"$root/DEBIAN/prerm" <<'SCRIPT'
#!/bin/sh
set -e
if [ -d /run/systemd/system ] && systemctl is-active --quiet slaqd; then
    systemctl stop slaqd || true
fi
SCRIPT
cat >"$root/DEBIAN/postrm" <<'SCRIPT'
#!/bin/sh
# purge also removes the service's state (jobs, logs, the database).
set -e
if [ -d /run/systemd/system ]; then
    systemctl daemon-reload || true
fi
if [ "$1" = purge ]; then
    rm -rf /var/lib/slaq /run/slaq
fi
SCRIPT
chmod 755 "$root/DEBIAN/postinst" "$root/DEBIAN/prerm" "$root/DEBIAN/postrm"

mkdir -p "$out"
deb="$out/slaq_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
