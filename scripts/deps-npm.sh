#!/usr/bin/env bash
# deps-npm.sh — install the npm packages a test directory pins, offline-safe
# and idempotent: `npm ci` runs only when DIR/node_modules is missing or
# older than DIR/package-lock.json.
#
# Usage: scripts/deps-npm.sh DIR...
set -euo pipefail
for dir in "$@"; do
  lock=$dir/package-lock.json
  stamp=$dir/node_modules/.package-lock.json
  [[ -f "$lock" ]] || continue
  [[ -f "$stamp" && ! "$lock" -nt "$stamp" ]] && continue
  if ! command -v npm >/dev/null; then
    echo "deps: npm is missing, so $dir's packages cannot be installed" >&2
    exit 1
  fi
  echo "deps: npm ci in $dir"
  if ! (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) >/tmp/slaq-deps-npm.log 2>&1; then
    echo "deps: npm ci failed in $dir; last lines of /tmp/slaq-deps-npm.log:" >&2
    tail -n 20 /tmp/slaq-deps-npm.log >&2
    exit 1
  fi
done
