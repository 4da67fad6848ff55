#!/usr/bin/env bash
# daemon-deps.sh — slaqd's include graph, file to file, and its cycles.
#
# Usage: scripts/daemon-deps.sh [--root DIR] [--arrows|--cycles|--upward|--summary]
#
# Each file of src/daemon is a node, its header counted with it: an
# include of "daemon/X.h" (or "X.h" beside the includer) is an arrow to
# X.c, and what X.h includes are arrows of X.c. A header with no .c of
# its own counts with the module its name begins with (store_sql.h with
# store.c), or else is a node by itself (daemon.h, loop.h).
#
#   --arrows   every arrow, "from -> to", one a line
#   --cycles   every include cycle: each strongly connected component of
#              more than one file, its files on one line (none: no line)
#   --upward   every arrow from a layer to one above it, "from -> to
#              (layer -> layer)", by the layer table of src/daemon/daemon.h
#              (1 is the top; a layer in sub-layers, 2a above 2b, is held
#              to their order too); a shared header (S) may be included
#              by all and include only the bottom layer; a file the table
#              does not place (?) is reported too
#   --summary  the counts of arrows, upward arrows, cycles and the files
#              in them
#
# With no option: the arrows, the cycles, the upward arrows, the summary.
# --root DIR reads DIR/src/daemon instead of ./src/daemon. The exit
# status is 0 whatever is found (tests/cli/test_daemon_layers.sh judges).
set -euo pipefail

usage() { sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; }
root=. what=all
while [[ $# -gt 0 ]]; do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --root) root=${2:?--root needs a directory}; shift 2 ;;
    --arrows|--cycles|--upward|--summary) what=${1#--}; shift ;;
    *) echo "daemon-deps.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
dir=$root/src/daemon
[[ -d $dir ]] || { echo "daemon-deps.sh: no $dir" >&2; exit 2; }

# node FILE: the node a file of src/daemon belongs to.
node() {
  local f=$1
  if [[ $f == *.h && -f $dir/${f%.h}.c ]]; then echo "${f%.h}.c"
  elif [[ $f == *_*.h && -f $dir/${f%%_*}.c ]]; then echo "${f%%_*}.c"
  else echo "$f"; fi
}

arrows() {
  local f from inc to
  for f in "$dir"/*.[ch]; do
    from=$(node "${f##*/}")
    sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f" |
      while read -r inc; do
        case $inc in
          daemon/*) inc=${inc#daemon/} ;;
          */*) continue ;;
        esac
        [[ -f $dir/$inc ]] || continue
        to=$(node "$inc")
        if [[ $to != "$from" ]]; then echo "$from -> $to"; fi
      done
  done | sort -u
}

# cycles <ARROWS: the strongly connected components of more than one node,
# from the transitive closure (the graph is a few dozen files).
cycles() {
  awk '
    { if (!($1 in id)) { id[$1] = n; name[n++] = $1 }
      if (!($3 in id)) { id[$3] = n; name[n++] = $3 }
      r[id[$1], id[$3]] = 1 }
    END {
      for (k = 0; k < n; k++)
        for (i = 0; i < n; i++)
          if ((i, k) in r)
            for (j = 0; j < n; j++)
              if ((k, j) in r) r[i, j] = 1
      for (i = 0; i < n; i++) {
        if (i in done) continue
        line = name[i]; m = 1
        for (j = i + 1; j < n; j++)
          if ((i, j) in r && (j, i) in r) { line = line " " name[j]; done[j] = 1; m++ }
        if (m > 1) print line
      }
    }' | while read -r line; do tr ' ' '\n' <<<"$line" | sort | tr '\n' ' ' |
           sed 's/ $/\n/'; done | sort
}

# The layer table of daemon.h: rows " *   N name   file.c file.c ..." (N:
# 1 is the top; with a letter, a sub-layer: 2a above 2b) and
# " *   shared   file.h ...". Prints "file layer".
layers() {
  sed -n 's/^ \*   \([0-9][a-z]\{0,1\}\) [a-z]*  *\([a-z_. ]*\)$/\1 \2/p;
          s/^ \*   shared  *\([a-z_. ]*\)$/S \1/p' "$dir/daemon.h" |
    while read -r n files; do
      for f in $files; do echo "$f $n"; done
    done
}

# An arrow may go to its own layer or one below; within a layer in
# sub-layers, to its own sub-layer or one below (the letter: 2b >= 2a).
upward() {
  layers >"$tmp/layers"
  awk 'FILENAME == ARGV[1] { layer[$1] = $2; if ($2 != "S" && $2 + 0 > bottom) bottom = $2 + 0; next }
       { a = $1; b = $3
         la = (a in layer) ? layer[a] : "?"; lb = (b in layer) ? layer[b] : "?"
         if (lb == "S") next
         if (la == "S") ok = lb != "?" && lb + 0 == bottom
         else ok = la != "?" && lb != "?" &&
                   (lb + 0 > la + 0 || (lb + 0 == la + 0 &&
                    substr(lb, 2) >= substr(la, 2)))
         if (!ok) print a " -> " b " (" la " -> " lb ")" }' "$tmp/layers" "$tmp/arrows"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
arrows >"$tmp/arrows"
cycles <"$tmp/arrows" >"$tmp/cycles"
upward >"$tmp/upward"

summary() {
  local incycle
  incycle=$(tr ' ' '\n' <"$tmp/cycles" | grep -c . || true)
  echo "arrows: $(wc -l <"$tmp/arrows")"
  echo "upward arrows: $(wc -l <"$tmp/upward")"
  echo "cycles: $(wc -l <"$tmp/cycles") (files in them: $incycle)"
}

case $what in
  arrows) cat "$tmp/arrows" ;;
  cycles) cat "$tmp/cycles" ;;
  upward) cat "$tmp/upward" ;;
  summary) summary ;;
  all)
    echo "# arrows"; cat "$tmp/arrows"
    echo "# cycles"; cat "$tmp/cycles"
    echo "# upward arrows"; cat "$tmp/upward"
    echo "# summary"; summary ;;
esac
