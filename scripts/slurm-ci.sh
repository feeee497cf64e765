#!/usr/bin/env bash
# slurm-ci.sh start|stop DIR - a real single-node Slurm (Debian's slurmctld, slurmd,
# slurm-client and munge; slurm-wlm 22.05 in Debian 12) for CI, as root, without systemd:
# everything lives under DIR (munge key, socket and pid; slurm.conf, gres.conf, state,
# spool, logs), on ports of its own, so it touches no system configuration.
#
#   start  installs the packages when missing (apt-get), writes the configuration, starts
#          munged, slurmctld and slurmd, and waits until the node is idle. Four fake GPUs:
#          GresTypes=gpu with gres.conf AutoDetect=off and File= links to /dev/null, so
#          `srun --gpus-per-task=1` sets CUDA_VISIBLE_DEVICES per task as on a GPU node.
#          Prints `export SLURM_CONF=...` for the caller. Exit 77 when Slurm cannot run here
#          (not root, packages not installable), with the reason on stderr.
#   stop   stops the three daemons started by start (by their pid files).
set -uo pipefail
cmd="${1:-}"
dir="${2:-}"
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: slurm-ci.sh start|stop DIR" >&2; exit 2; }
dir="$(mkdir -p "$dir" && cd "$dir" && pwd)"
conf="$dir/slurm/slurm.conf"

stop() {
  for p in "$dir/slurm/slurmd.pid" "$dir/slurm/slurmctld.pid" "$dir/munge/munged.pid"; do
    [ -f "$p" ] || continue
    pid="$(cat "$p")"
    kill "$pid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
    rm -f "$p"
  done
}

install_packages() {
  local need=()
  for b in slurmctld slurmd srun munged; do
    command -v "$b" > /dev/null || PATH="$PATH:/usr/sbin" command -v "$b" > /dev/null || need=(slurmctld slurmd slurm-client munge)
  done
  ((${#need[@]})) || return 0
  apt-get update -qq > /dev/null 2>&1 &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" > /dev/null 2>&1
}

write_config() {
  local host="$1" port="$2"
  mkdir -p "$dir/slurm/state" "$dir/slurm/spool" "$dir/gpu"
  for i in 0 1 2 3; do ln -sf /dev/null "$dir/gpu/nvidia$i"; done
  cat > "$conf" <<EOF
ClusterName=kbenchci
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
SlurmctldPort=$port
SlurmdPort=$((port + 1))
StateSaveLocation=$dir/slurm/state
SlurmdSpoolDir=$dir/slurm/spool
SlurmctldPidFile=$dir/slurm/slurmctld.pid
SlurmdPidFile=$dir/slurm/slurmd.pid
SlurmctldLogFile=$dir/slurm/slurmctld.log
SlurmdLogFile=$dir/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
GresTypes=gpu
NodeName=$host CPUs=4 Boards=1 SocketsPerBoard=1 CoresPerSocket=4 ThreadsPerCore=1 RealMemory=1024 Gres=gpu:4 State=UNKNOWN
PartitionName=ci Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
EOF
  cat > "$dir/slurm/gres.conf" <<EOF
AutoDetect=off
Name=gpu File=$dir/gpu/nvidia[0-3]
EOF
}

start_munge() {
  mkdir -p "$dir/munge"
  chmod 700 "$dir/munge"
  [ -f "$dir/munge/munge.key" ] || { dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 2>/dev/null; }
  chmod 400 "$dir/munge/munge.key"
  /usr/sbin/munged --force --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
      --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed"
}

wait_idle() {
  for _ in $(seq 150); do
    state="$(SLURM_CONF="$conf" sinfo -h -o %t 2>/dev/null | head -1)"
    [ "$state" = idle ] && return 0
    sleep 0.2
  done
  echo "slurm-ci.sh: the node did not become idle (state '${state:-none}'); logs in $dir/slurm" >&2
  tail -5 "$dir/slurm/slurmctld.log" "$dir/slurm/slurmd.log" >&2 2>/dev/null
  return 1
}

case "$cmd" in
  start)
    if [ "$(id -u)" -ne 0 ]; then
      echo "slurm-ci.sh: Slurm needs root here (slurmd as root, no systemd): skipped" >&2
      exit 77
    fi
    install_packages || { echo "slurm-ci.sh: could not install slurmctld slurmd slurm-client munge: skipped" >&2; exit 77; }
    host="$(hostname -s)"
    port=$((20000 + RANDOM % 20000))
    write_config "$host" "$port"
    start_munge || { echo "slurm-ci.sh: munged did not start ($dir/munge/munged.log)" >&2; stop; exit 1; }
    SLURM_CONF="$conf" /usr/sbin/slurmctld -f "$conf" || { echo "slurm-ci.sh: slurmctld did not start" >&2; stop; exit 1; }
    SLURM_CONF="$conf" /usr/sbin/slurmd -f "$conf" || { echo "slurm-ci.sh: slurmd did not start" >&2; stop; exit 1; }
    wait_idle || { stop; exit 1; }
    echo "export SLURM_CONF=$conf"
    ;;
  stop)
    stop
    ;;
  *)
    echo "usage: slurm-ci.sh start|stop DIR" >&2
    exit 2
    ;;
esac
