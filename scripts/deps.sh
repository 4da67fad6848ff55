#!/usr/bin/env bash
# deps.sh — install the Debian packages slaq needs, non-interactively.
#
# Usage: scripts/deps.sh LIST...   (each LIST names one package per line;
# '#' starts a comment). Only missing packages are installed, and each one is
# named before it is installed, so running this again is cheap and quiet.
set -euo pipefail

want=()
for list in "$@"; do
  while read -r pkg _; do
    [[ -z "$pkg" || "$pkg" == \#* ]] && continue
    want+=("$pkg")
  done <"$list"
done
[[ ${#want[@]} -gt 0 ]] || exit 0

# A name an installed package provides counts as installed (nodejs from
# another archive provides npm, and would conflict with Debian's npm).
provided=" $(dpkg-query -W -f='${db:Status-Status} ${Provides}\n' 2>/dev/null |
  sed -n 's/^installed //p' | tr ',' '\n' | sed 's/ *(.*//; s/^ *//' | tr '\n' ' ') "
missing=()
for pkg in "${want[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
  [[ "$status" == installed || "$provided" == *" $pkg "* ]] || missing+=("$pkg")
done
[[ ${#missing[@]} -gt 0 ]] || exit 0

if ! command -v apt-get >/dev/null; then
  echo "deps: missing packages ${missing[*]}, and apt-get is not available;" >&2
  echo "deps: install them with your system's package manager." >&2
  exit 1
fi
sudo=""
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null; then sudo="sudo"; else
    echo "deps: need root to install: ${missing[*]}" >&2; exit 1
  fi
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# A fresh machine may have empty package lists; refresh once if the install
# cannot find a package.
if ! $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >/tmp/slaq-deps.log 2>&1; then
  $sudo apt-get update -q >/tmp/slaq-deps.log 2>&1 || true
  if ! $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >>/tmp/slaq-deps.log 2>&1; then
    echo "deps: apt-get install failed; last lines of /tmp/slaq-deps.log:" >&2
    tail -n 20 /tmp/slaq-deps.log >&2
    exit 1
  fi
fi
echo "deps: installed ${missing[*]}"
