#!/usr/bin/env bash
# deb.sh — split a staged `make install` tree into slaq's Debian packages,
# with dpkg-deb.
#
# Usage: scripts/deb.sh STAGE OUT_DIR
#
# STAGE is the DESTDIR of `make install PREFIX=/usr LIBDIR=/usr/lib/TRIPLET
# DOCDIR=/usr/share/doc/slaq-doc ...` (what `make deb` runs). Writes to
# OUT_DIR, printing each path:
#
#   slaq_V_ARCH.deb          the programs, the systemd unit, the
#                            configuration, manual pages, bash completion
#   libslaq0_V_ARCH.deb      the shared libraries libslaq and
#                            libslaq-client (an ldconfig trigger, shlibs)
#   libslaq-dev_V_ARCH.deb   headers, static libraries, the .so links and
#                            pkg-config files; depends on the -dev
#                            packages a static link needs
#   python3-slaq_V_all.deb   the Python client for Debian's python3
#   slaq-doc_V_all.deb       the documentation and the examples
#
# Every file of STAGE goes to exactly one package; a file no rule takes is
# an error, so a new installed file cannot be silently left out.
set -euo pipefail

stage=${1:?usage: deb.sh STAGE OUT_DIR}
out=${2:?usage: deb.sh STAGE OUT_DIR}
src=$(cd "$(dirname "$0")/.." && pwd)
stage=$(cd "$stage" && pwd)
version=$(sed -n 's/^#define SLAQ_VERSION "\(.*\)"$/\1/p' "$src/include/slaq/version.h")
arch=$(dpkg --print-architecture)
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
maint="slaq developers <slaq-devel@lists.debian.net>"
# The changelog's date: the last commit's, so the same sources give the
# same packages; the clock where there is no git history.
when=$(git -C "$src" log -1 --format=%cD 2>/dev/null || date -R)
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(date -d "$when" +%s)}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[[ -d "$stage/usr/lib/$ma" ]] || {
  echo "deb.sh: $stage/usr/lib/$ma missing: stage with LIBDIR=/usr/lib/$ma" >&2
  exit 1
}

# take PKG PATH...: moves each PATH (relative to STAGE, globs allowed) into
# PKG's tree, keeping symbolic links as links.
take() {
  local pkg=$1 p f; shift
  for p in "$@"; do
    for f in "$stage"/$p; do
      [[ -e $f || -L $f ]] || { echo "deb.sh: nothing at $p for $pkg" >&2; exit 1; }
      local rel=${f#"$stage"/}
      mkdir -p "$work/$pkg/$(dirname "$rel")"
      mv "$f" "$work/$pkg/$rel"
    done
  done
}

take slaq usr/bin etc lib/systemd usr/share/man usr/share/bash-completion \
  usr/share/slaq
take libslaq0 "usr/lib/$ma/libslaq.so.*" "usr/lib/$ma/libslaq-client.so.*"
take libslaq-dev usr/include "usr/lib/$ma/*.a" "usr/lib/$ma/libslaq.so" \
  "usr/lib/$ma/libslaq-client.so" "usr/lib/$ma/pkgconfig"
take python3-slaq usr/lib/python3
take slaq-doc usr/share/doc/slaq-doc
left=$(find "$stage" -mindepth 1 \( -type f -o -type l \) | sed "s|^$stage||")
if [[ -n $left ]]; then
  echo "deb.sh: installed files no package takes:" >&2
  echo "$left" >&2
  exit 1
fi

# Binaries as Debian ships them: without debugging symbols.
find "$work/slaq/usr/bin" -type f -exec strip --strip-unneeded \
  --remove-section=.comment --remove-section=.note {} +
find "$work/libslaq0" -type f -name '*.so.*' -exec strip --strip-unneeded \
  --remove-section=.comment --remove-section=.note {} +
find "$work/libslaq-dev" -type f -name '*.a' -exec strip --strip-debug \
  --remove-section=.comment {} +
# Manual pages compressed, as Debian policy asks.
find "$work/slaq/usr/share/man" -type f -name '*.[18]' -exec gzip -9n {} +

# Shared-library dependencies of the ELF files in a package, the Debian
# way; libslaq0's own libraries are found in its tree.
shlibs_of() {
  local pkg=$1 elves=() f
  while IFS= read -r f; do
    file -b "$f" | grep -q '^ELF' && elves+=("$f")
  done < <(find "$work/$pkg" -type f \( -path '*/bin/*' -o -name '*.so.*' \))
  [[ ${#elves[@]} -gt 0 ]] || return 0
  mkdir -p "$work/dsh/debian"
  printf 'Source: slaq\n\nPackage: %s\nArchitecture: any\n' "$pkg" \
    >"$work/dsh/debian/control"
  (cd "$work/dsh" && dpkg-shlibdeps -O -l"$work/libslaq0/usr/lib/$ma" \
     "${elves[@]}" 2>"$work/warn") | sed -n 's/^shlibs:Depends=//p'
  grep -v 'warning: binaries to analyze should already be' "$work/warn" >&2 || true
}

copyright() {  # copyright PKG: the machine-readable copyright file
  local d="$work/$1/usr/share/doc/$1"
  mkdir -p "$d"
  cat >"$d/copyright" <<'COPYRIGHT'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: slaq
Comment: slaq links GSL, which is GPL-3.0-or-later, so slaq is as well.

Files: *
Copyright: 2025-2026 slaq developers
License: GPL-3.0-or-later

License: GPL-3.0-or-later
 This program is free software: you can redistribute it and/or modify it
 under the terms of the GNU General Public License as published by the
 Free Software Foundation, either version 3 of the License, or (at your
 option) any later version.
 .
 This program is distributed in the hope that it will be useful, but
 WITHOUT ANY WARRANTY; without even the implied warranty of
 MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE. See the GNU General
 Public License for more details.
 .
 On Debian systems, the complete text of the GNU General Public License
 version 3 can be found in /usr/share/common-licenses/GPL-3.
COPYRIGHT
  printf 'slaq (%s) unstable; urgency=medium\n\n  * slaq %s.\n\n -- %s  %s\n' \
    "$version" "$version" "$maint" "$when" | gzip -9n >"$d/changelog.gz"
}

# control PKG ARCH SECTION DEPENDS [EXTRA FIELDS]: DEBIAN/control, from the
# description on stdin.
control() {
  local pkg=$1 a=$2 section=$3 depends=$4 extra=${5:-}
  local size
  size=$(du -sk --apparent-size "$work/$pkg" | cut -f1)
  mkdir -p "$work/$pkg/DEBIAN"
  {
    echo "Package: $pkg"
    echo "Version: $version"
    echo "Architecture: $a"
    echo "Maintainer: $maint"
    echo "Installed-Size: $size"
    echo "Section: $section"
    echo "Priority: optional"
    [[ -z $depends ]] || echo "Depends: $depends"
    [[ -z $extra ]] || printf '%s\n' "$extra"
    cat
  } >"$work/$pkg/DEBIAN/control"
}

build() {  # build PKG ARCH: md5sums, then the .deb
  local pkg=$1 a=$2
  (cd "$work/$pkg" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' |
     sort -z | xargs -0r md5sum) >"$work/$pkg/DEBIAN/md5sums"
  find "$work/$pkg" -type d -exec chmod 755 {} +
  mkdir -p "$out"
  local deb="$out/${pkg}_${version}_${a}.deb"
  dpkg-deb --root-owner-group -Zxz --build "$work/$pkg" "$deb" >/dev/null
  echo "$deb"
}

for p in slaq libslaq0 libslaq-dev python3-slaq slaq-doc; do copyright "$p"; done

# --- libslaq0
lib_shlibs=$(shlibs_of libslaq0)
control libslaq0 "$arch" libs "$lib_shlibs" "Multi-Arch: same" <<'DESC'
Description: quality-driven scheduling of ML training jobs (libraries)
 slaq shares a machine's CPUs among iterative training jobs by how much
 each job's loss is predicted to fall, after SLAQ (SoCC'17).
 .
 This package holds the shared libraries: libslaq, the scheduling core
 (loss prediction and core allocation), and libslaq-client, what a
 training job links to report its progress to slaqd.
DESC
printf 'libslaq 0 libslaq0 (>= %s)\nlibslaq-client 0 libslaq0 (>= %s)\n' \
  "$version" "$version" >"$work/libslaq0/DEBIAN/shlibs"
echo "activate-noawait ldconfig" >"$work/libslaq0/DEBIAN/triggers"
# Shared libraries are not executable.
find "$work/libslaq0" -type f -name '*.so.*' -exec chmod 644 {} +

# --- libslaq-dev: what a static link of either library needs as well.
control libslaq-dev "$arch" libdevel \
  "libslaq0 (= $version), libgsl-dev, libjansson-dev" "Multi-Arch: same" <<'DESC'
Description: quality-driven scheduling of ML training jobs (development files)
 slaq shares a machine's CPUs among iterative training jobs by how much
 each job's loss is predicted to fall, after SLAQ (SoCC'17).
 .
 This package holds the headers, the static libraries and the pkg-config
 files (slaq, slaq-client) to build programs with libslaq and
 libslaq-client.
DESC

# --- slaq: the programs link the libraries statically.
prog_shlibs=$(shlibs_of slaq)
[[ -n "$prog_shlibs" ]] || { echo "deb.sh: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
control slaq "$arch" science "$prog_shlibs, libjs-chart.js" \
  "Recommends: python3-slaq, gnuplot-nox, dataset-fashion-mnist
Suggests: slaq-doc" <<'DESC'
Description: quality-driven scheduler for machine-learning training jobs
 slaq shares a machine's CPUs among iterative training jobs by how much
 each job's loss is predicted to fall, after SLAQ (SoCC'17): jobs that can
 still improve a lot get more cores, nearly converged ones fewer.
 .
 This package holds slaqd (the daemon and its web dashboard, with a
 systemd unit), the slaq command (submit, ls, show, history, top, cancel,
 logs, policy, status; the simulator sim and workload gen; predict-eval
 and bench), slaq-train (real training jobs) and slaq-aqp (approximate
 queries).
DESC
# dpkg keeps an administrator's edits to these across upgrades.
(cd "$work/slaq" && find etc -type f | sed 's|^|/|') >"$work/slaq/DEBIAN/conffiles"
cat >"$work/slaq/DEBIAN/postinst" <<'SCRIPT'
#!/bin/sh
# The service is installed but not started: `systemctl enable --now slaqd`.
set -e
if [ "$1" = configure ] && [ -d /run/systemd/system ]; then
    systemctl daemon-reload || true
fi
SCRIPT
cat >"$work/slaq/DEBIAN/prerm" <<'SCRIPT'
#!/bin/sh
set -e
if [ -d /run/systemd/system ] && command -v deb-systemd-invoke >/dev/null; then
    deb-systemd-invoke stop slaqd.service >/dev/null || true
fi
SCRIPT
cat >"$work/slaq/DEBIAN/postrm" <<'SCRIPT'
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
chmod 755 "$work/slaq/DEBIAN/postinst" "$work/slaq/DEBIAN/prerm" \
  "$work/slaq/DEBIAN/postrm"

# --- python3-slaq
# The helpers (slaq.torch, slaq.sklearn, slaq.xgboost, slaq.skorch) import
# their library only when used, so the libraries are suggestions.
control python3-slaq all python "python3:any" \
  "Suggests: python3-torch, python3-sklearn, python3-threadpoolctl, python3-xgboost, python3-skorch" <<'DESC'
Description: quality-driven scheduling of ML training jobs (Python client)
 slaq shares a machine's CPUs among iterative training jobs by how much
 each job's loss is predicted to fall, after SLAQ (SoCC'17).
 .
 This package holds the Python client of slaqd: a training loop (PyTorch,
 scikit-learn, or plain Python) reports each iteration's loss through it
 and learns its share of the cores; training-loop helpers for PyTorch,
 scikit-learn, XGBoost and skorch do the reporting, thread sizing and
 stopping in a line or two; slaq.Scheduler submits, lists, waits for and
 cancels jobs from Python, and python3 -m slaq is a command line over it.
DESC

# --- slaq-doc
control slaq-doc all doc "" "" <<'DESC'
Description: quality-driven scheduling of ML training jobs (documentation)
 slaq shares a machine's CPUs among iterative training jobs by how much
 each job's loss is predicted to fall, after SLAQ (SoCC'17).
 .
 This package holds the user documentation (slaqd, the slaq command, the
 clients, the protocol, the simulator, sweeps, queries) and the examples:
 a C job, a PyTorch job, a sweep specification, a configuration file, and
 a Prometheus scrape configuration with recording and alerting rules.
DESC

build libslaq0 "$arch"
build libslaq-dev "$arch"
build slaq "$arch"
build python3-slaq all
build slaq-doc all
