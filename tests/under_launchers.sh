#!/usr/bin/env bash
# under_launchers.sh mpirun|srun N PROGRAM [ARGS...]: runs a DPS program as N node processes on this
# machine, started as the ranks of mpirun or as the tasks srun starts (SLURM_PROCID, SLURM_NTASKS);
# node 0's output is what it prints. DPS only takes their numbers from the launcher, not MPI itself.
set -euo pipefail
mode=$1 n=$2
shift 2
# The coordinator's port: outside the kernel's ephemeral range, where another test's connection could
# take it between the check below and node 0's listen (it did: "Address already in use").
read -r low high </proc/sys/net/ipv4/ip_local_port_range
if ((low > 11024)); then first=10000 count=$((low - 10000)); else first=$((high + 1)) count=$((65535 - high)); fi
pick() { port=$((first + (RANDOM * 32768 + RANDOM) % count)); }
pick
while ss -tanH "sport = :$port" | grep -q .; do pick; done  # any socket on it, listening or connected
DPS_SECRET=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
export DPS_COORDINATOR=127.0.0.1:$port DPS_SECRET
case $mode in
  mpirun)
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
      exec mpirun --oversubscribe -np "$n" -x DPS_COORDINATOR -x DPS_SECRET "$@" ;;
  srun)
    export SLURM_NTASKS=$n SLURM_STEP_TASKS_PER_NODE=$n SLURM_NODEID=0  # srun on one node
    for ((task = 1; task < n; task++)); do SLURM_PROCID=$task "$@" >/dev/null & done
    status=0
    SLURM_PROCID=0 "$@" || status=$?
    wait
    exit $status ;;
  *) echo "under_launchers.sh: mpirun or srun, not '$mode'" >&2; exit 2 ;;
esac
