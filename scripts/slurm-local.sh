#!/usr/bin/env bash
# slurm-local.sh — a throw-away Slurm cluster on this one machine, for slaq's
# tests and for trying `slaq cluster up --slurm` without real nodes.
#
# Usage: scripts/slurm-local.sh up | down | status | env | help
#
#   up      slurmctld and N slurmd "nodes" (n1 .. nN) on 127.0.0.1, each on
#           its own port, with a private munged (own key, own socket, run as
#           the munge user when started by root). Waits until every node is
#           idle. Idempotent: a healthy cluster with the same settings is
#           left alone; anything stale or different is taken down first.
#   down    cancels the cluster's jobs, stops its job processes, slurmstepd,
#           the slurmd, slurmctld and munged, and removes the directory.
#           Processes are found by pid file and by the SLURM_CONF in their
#           environment, never by name alone. Idempotent.
#   status  prints what runs; exit 0 up, 1 partly up, 3 down.
#   env     prints `export SLURM_CONF=...` (eval it before srun/sbatch) and
#           `export SLAQ_AGENT_CORES=...`: each node's agent then manages
#           its part of this machine, nproc / N cores, not every CPU the
#           node claims (N nodes on one machine claim N times its CPUs).
#
# Everything (slurm.conf, munge key and socket, state, spool, logs, pid
# files) lives in one directory; /etc/slurm, /etc/munge and /run/munge are
# neither read nor written. Settings (environment):
#   SLAQ_SLURM_DIR    the directory (default /tmp/slaq-slurm-$(id -u));
#                     it and its parents must be searchable by everyone
#                     (munged refuses its socket otherwise)
#   SLAQ_SLURM_NODES  number of nodes (default 3)
#   SLAQ_SLURM_CPUS   CPUs each node claims (default 2; may exceed nproc)
#   SLAQ_SLURM_PORT   slurmctld's port (default 16900); node nI listens on
#                     SLAQ_SLURM_PORT + I
#   SLAQ_SLURM_WAIT   seconds `up` waits for the nodes (default 40)
# Needs Debian's slurm-wlm and munge (deps/cluster.txt, `make deps`).
set -u
PATH=$PATH:/usr/sbin:/sbin
unset SLURMD_NODENAME SLURM_JOB_ID SLURM_JOBID

DIR=${SLAQ_SLURM_DIR:-/tmp/slaq-slurm-$(id -u)}
DIR=${DIR%/}
NODES=${SLAQ_SLURM_NODES:-3}
CPUS=${SLAQ_SLURM_CPUS:-2}
PORT=${SLAQ_SLURM_PORT:-16900}
WAIT=${SLAQ_SLURM_WAIT:-40}
CONF=$DIR/slurm.conf
MDIR=$DIR/munge
MSOCK=$MDIR/socket
ME=$(id -un)

say() { printf 'slurm-local: %s\n' "$*" >&2; }
fail() { say "error: $*"; exit 1; }

case $DIR in /*) ;; *) fail "SLAQ_SLURM_DIR must be an absolute path, got '$DIR'" ;; esac
case $DIR in *[[:space:]]*) fail "SLAQ_SLURM_DIR may not contain spaces" ;; esac
for v in NODES CPUS PORT WAIT; do
  [[ ${!v} =~ ^[0-9]+$ ]] || fail "SLAQ_SLURM_$v must be a whole number, got '${!v}'"
done
[ "$NODES" -ge 1 ] || fail "SLAQ_SLURM_NODES must be at least 1"

nodes() { local i; for ((i = 1; i <= NODES; i++)); do echo "n$i"; done; }

# ------------------------------------------------------------- processes

# 0 if pid is a live process (not a zombie).
live() {
  local s
  [ -n "${1:-}" ] && s=$(awk '{ sub(/.*\) /, ""); print $1 }' "/proc/$1/stat" 2>/dev/null) &&
    [ -n "$s" ] && [ "$s" != Z ] && [ "$s" != X ]
}

# The pid in a pid file, if that process is live and really ours.
pid_of() { # name: munged | slurmctld | slurmd-nI
  local f=$DIR/run/$1.pid p
  [ -r "$f" ] || return 1
  p=$(tr -cd 0-9 <"$f")
  live "$p" || return 1
  case $1 in
    munged) tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qF -- "--socket=$MSOCK" ;;
    *) grep -qzxF "SLURM_CONF=$CONF" "/proc/$p/environ" 2>/dev/null ;;
  esac && echo "$p"
}

# This shell and its ancestors: never signalled.
lineage() {
  local p=$BASHPID
  while [ "${p:-0}" -gt 1 ]; do
    echo "$p"
    p=$(awk '{ sub(/.*\) /, ""); print $2 }' "/proc/$p/stat" 2>/dev/null)
  done
}

# Every live process of this cluster except munged: its daemons,
# slurmstepd and the job processes they started (all carry our SLURM_CONF;
# srun and sbatch callers are left alone, they have no SLURMD_NODENAME).
members() { # [jobs]: only job processes and slurmstepd
  local mine f p comm
  mine=" $(lineage | tr '\n' ' ') "
  for f in $(grep -lzxF "SLURM_CONF=$CONF" /proc/[0-9]*/environ 2>/dev/null); do
    p=${f#/proc/}; p=${p%%/*}
    [[ $mine == *" $p "* ]] && continue
    live "$p" || continue
    comm=$(cat "/proc/$p/comm" 2>/dev/null)
    case $comm in
      slurmctld|slurmd|slurmscriptd) [ "${1:-}" = jobs ] || echo "$p" ;;
      slurmstepd) echo "$p" ;;
      *) grep -qz '^SLURMD_NODENAME=' "/proc/$p/environ" 2>/dev/null && echo "$p" ;;
    esac
  done
}

# TERM, then KILL whatever is left after `secs`.
stop_pids() { # secs pid...
  local secs=$1 p left end
  shift
  [ $# -gt 0 ] || return 0
  kill -TERM "$@" 2>/dev/null
  end=$((SECONDS + secs))
  while :; do
    left=()
    for p in "$@"; do live "$p" && left+=("$p"); done
    [ ${#left[@]} -eq 0 ] && return 0
    [ $SECONDS -ge $end ] && break
    sleep 0.1
  done
  kill -KILL "${left[@]}" 2>/dev/null
  sleep 0.2
}

# Starts a daemon detached from our descriptors (a caller's pipe held open
# by a daemon would make `$(slurm-local.sh up)` hang).
spawn() { # logname [--as USER] command...
  local log=$DIR/log/$1.out
  shift
  (
    cd / || exit 1
    for fd in /proc/self/fd/*; do
      fd=${fd##*/}
      [ "$fd" -gt 2 ] 2>/dev/null && eval "exec $fd>&-" 2>/dev/null
    done
    exec "$@" </dev/null >>"$log" 2>&1
  )
}

port_taken() { [ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]; }

# ------------------------------------------------------------ the config

write_conf() {
  local i
  echo "# Written by slaq's scripts/slurm-local.sh: a test cluster on one host."
  echo "ClusterName=slaqlocal"
  echo "SlurmctldHost=localhost"
  echo "SlurmctldPort=$PORT"
  echo "SlurmUser=$ME"
  echo "SlurmdUser=$ME"
  echo "AuthType=auth/munge"
  echo "CredType=cred/munge"
  echo "AuthInfo=socket=$MSOCK"
  echo "StateSaveLocation=$DIR/state"
  echo "SlurmdSpoolDir=$DIR/spool/%n"
  echo "SlurmctldPidFile=$DIR/run/slurmctld.pid"
  echo "SlurmdPidFile=$DIR/run/slurmd-%n.pid"
  echo "SlurmctldLogFile=$DIR/log/slurmctld.log"
  echo "SlurmdLogFile=$DIR/log/slurmd-%n.log"
  echo "PlugStackConfig=$DIR/plugstack.conf"
  echo "ProctrackType=proctrack/linuxproc"
  echo "TaskPlugin=task/none"
  echo "SelectType=select/cons_tres"
  echo "SelectTypeParameters=CR_CPU"
  echo "SchedulerType=sched/backfill"
  echo "SchedulerParameters=batch_sched_delay=0"
  echo "MpiDefault=none"
  echo "SwitchType=switch/none"
  echo "JobAcctGatherType=jobacct_gather/none"
  echo "AccountingStorageType=accounting_storage/none"
  echo "JobCompType=jobcomp/none"
  echo "ReturnToService=2"
  echo "SlurmdParameters=config_overrides"
  echo "KillWait=5"
  echo "InactiveLimit=0"
  echo "MinJobAge=300"
  for ((i = 1; i <= NODES; i++)); do
    echo "NodeName=n$i NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((PORT + i)) CPUs=$CPUS RealMemory=1024 State=UNKNOWN"
  done
  echo "PartitionName=main Nodes=n[1-$NODES] Default=YES MaxTime=INFINITE State=UP"
}

idle_nodes() {
  SLURM_CONF=$CONF timeout 5 sinfo -h -N -o '%N %T' 2>/dev/null |
    awk '$2 ~ /^(idle|mixed|allocated|completing)$/ { n++ } END { print n + 0 }'
}

healthy() {
  local n
  [ -r "$CONF" ] && [ "$(write_conf)" = "$(cat "$CONF")" ] || return 1
  pid_of munged >/dev/null && pid_of slurmctld >/dev/null || return 1
  for n in $(nodes); do pid_of "slurmd-$n" >/dev/null || return 1; done
  [ "$(idle_nodes)" -ge "$NODES" ]
}

# ---------------------------------------------------------------- status

cmd_status() {
  local name p up=0 down=0
  echo "directory: $DIR (SLURM_CONF=$CONF)"
  for name in munged slurmctld $(nodes | sed 's/^/slurmd-/'); do
    if p=$(pid_of "$name"); then echo "  $name: pid $p"; up=$((up + 1))
    else echo "  $name: not running"; down=$((down + 1)); fi
  done
  if pid_of slurmctld >/dev/null; then
    SLURM_CONF=$CONF timeout 5 sinfo -N -o '%N %T %c' 2>&1 | sed 's/^/  /'
  fi
  if [ $down = 0 ] && healthy; then echo "status: up"; return 0; fi
  if [ $up -gt 0 ] || [ -n "$(members)" ]; then echo "status: partly up"; return 1; fi
  echo "status: down"
  return 3
}

# ------------------------------------------------------------------ down

cmd_down() {
  local p n list end
  export SLURM_CONF=$CONF
  if pid_of slurmctld >/dev/null; then
    list=$(timeout 5 squeue -h -o %A 2>/dev/null | tr '\n' ' ')
    if [ -n "${list// /}" ]; then
      say "cancelling jobs $list"
      timeout 5 scancel $list 2>/dev/null
      end=$((SECONDS + 3))
      while [ $SECONDS -lt $end ] && [ -n "$(timeout 5 squeue -h -o %A 2>/dev/null)" ]; do
        sleep 0.2
      done
    fi
  fi
  # Job processes (also those that left their process group) and
  # slurmstepd first: a slurmd waiting on a step ignores SIGTERM.
  mapfile -t list < <(members jobs)
  stop_pids 2 "${list[@]}"
  # The slurmd before slurmctld: without its controller a slurmd retries
  # its messages for 10 s before it exits.
  list=()
  for n in $(nodes); do p=$(pid_of "slurmd-$n") && list+=("$p"); done
  stop_pids 10 "${list[@]}"
  p=$(pid_of slurmctld) && stop_pids 10 "$p"
  mapfile -t list < <(members)
  stop_pids 2 "${list[@]}"
  # munged last: dying steps may still authenticate.
  p=$(pid_of munged) && stop_pids 5 "$p"
  for p in $(grep -lzxF -- "--socket=$MSOCK" /proc/[0-9]*/cmdline 2>/dev/null); do
    p=${p#/proc/}; p=${p%%/*}
    live "$p" && kill -KILL "$p" 2>/dev/null
  done
  [ -d "$DIR" ] && rm -rf "$DIR"
  say "down"
}

# -------------------------------------------------------------------- up

munge_works() {
  [ -S "$MSOCK" ] && munge -S "$MSOCK" -n 2>/dev/null | unmunge -S "$MSOCK" >/dev/null 2>&1
}

# Waits up to secs for a command to succeed.
until_ok() { # secs command...
  local end=$((SECONDS + $1))
  shift
  until "$@"; do
    [ $SECONDS -ge $end ] && return 1
    sleep 0.1
  done
}

up_failed() {
  say "error: $*; logs:"
  tail -n 5 "$DIR"/log/* 2>/dev/null | sed 's/^/  /' >&2
  cp -r "$DIR/log" "$DIR.failed-logs" 2>/dev/null
  cmd_down
  say "the logs were kept in $DIR.failed-logs"
  exit 1
}

cmd_up() {
  local n i d p
  for p in slurmctld slurmd srun sinfo munged munge; do
    command -v "$p" >/dev/null ||
      fail "$p not found: install Debian's slurm-wlm and munge (make deps)"
  done
  if healthy; then say "already up ($NODES nodes; export SLURM_CONF=$CONF)"; return 0; fi
  if [ -e "$DIR" ] || [ -n "$(members)" ]; then say "taking down a stale instance"; cmd_down; fi
  for ((i = 0; i <= NODES; i++)); do
    port_taken $((PORT + i)) && fail "port $((PORT + i)) is in use (choose another SLAQ_SLURM_PORT)"
  done
  # munged wants every directory above its socket searchable by all.
  d=$(dirname "$DIR")
  while [ "$d" != / ]; do
    [ "$(($(stat -c '0%a' "$d" 2>/dev/null || echo 0) & 1))" = 1 ] ||
      fail "$d is not searchable by everyone (munged refuses its socket below it)"
    d=$(dirname "$d")
  done

  umask 022
  mkdir -p "$DIR/state" "$DIR/log" "$DIR/run" "$MDIR" || fail "cannot create $DIR"
  for n in $(nodes); do mkdir -p "$DIR/spool/$n"; done
  chmod 755 "$DIR"
  : >"$DIR/plugstack.conf"
  write_conf >"$CONF"

  # munged: its own key and socket; as the munge user when we are root.
  dd if=/dev/urandom of="$MDIR/key" bs=1024 count=1 status=none
  chmod 400 "$MDIR/key"
  local as=()
  if [ "$(id -u)" = 0 ] && getent passwd munge >/dev/null; then
    chown -R munge: "$MDIR"
    as=(runuser -u munge --)
  fi
  spawn munged "${as[@]}" munged --socket="$MSOCK" --key-file="$MDIR/key" \
    --pid-file="$MDIR/munged.pid" --log-file="$MDIR/munged.log" \
    --seed-file="$MDIR/seed" || up_failed "munged did not start"
  until_ok 10 munge_works || up_failed "munged does not answer on $MSOCK"
  cp "$MDIR/munged.pid" "$DIR/run/munged.pid"

  export SLURM_CONF=$CONF
  spawn slurmctld slurmctld -i || up_failed "slurmctld did not start"
  for n in $(nodes); do spawn "slurmd-$n" slurmd -N "$n" || up_failed "slurmd -N $n did not start"; done
  until_ok "$WAIT" healthy || up_failed "the nodes are not idle after $WAIT s"
  say "up: $NODES nodes x $CPUS CPUs; export SLURM_CONF=$CONF"
}

usage() { sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

case ${1:-} in
  up|down|status) ;;
  env)
    echo "export SLURM_CONF=$CONF"
    awk -v c="$(nproc)" -v n="$NODES" 'BEGIN { printf "export SLAQ_AGENT_CORES=%.2f\n", c / n }'
    exit 0 ;;
  help|-h|--help) usage; exit 0 ;;
  *) usage >&2; exit 2 ;;
esac
# One of up/down/status at a time per directory (lock on its parent).
exec 9>"$(dirname "$DIR")/.$(basename "$DIR").lock" ||
  fail "cannot create the lock file next to $DIR"
flock -w 120 9 || fail "another slurm-local.sh holds the lock on $DIR"
"cmd_$1"
