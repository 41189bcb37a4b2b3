#!/usr/bin/env bash
# under_launchers.sh mpirun|srun N PROGRAM [ARGS...]: runs a DPS program as N node processes on this
# machine, started as the ranks of mpirun or as the tasks srun starts (SLURM_PROCID, SLURM_NTASKS);
# node 0's output is what it prints. DPS only takes their numbers from the launcher, not MPI itself.
set -euo pipefail
mode=$1 n=$2
shift 2
port=$((RANDOM % 20000 + 30000))
while ss -ltnH "sport = :$port" | grep -q .; do port=$((RANDOM % 20000 + 30000)); done
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
