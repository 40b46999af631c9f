#!/bin/bash
# Runs one cleansweep sweep inside a Slurm allocation; sweep.sbatch and array.sbatch call it.
#   launch.sh CONFIG [cleansweep run options, e.g. --shard 2/8 --set study.n_trials=500]
#
# - One MPI task per GPU on every node, plus the coordinator (rank 0) on the first node, started
#   with srun --mpi=pmix and laid out by task-layout.sh; each worker gives its trials one GPU
#   (docs/slurm.md has the binding rules).
# - SIGUSR1 (sbatch --signal=B:USR1@SECONDS) is passed on to the tasks: the coordinator stops
#   handing out trials, lets running ones finish for trial.stop_grace, and exits 3. If the job
#   may be requeued (--requeue) it is then requeued, and the next start resumes the study.
# - SIGTERM (scancel, preemption, scontrol requeue) reaches the tasks from Slurm itself and ends
#   the same way; a requeued job resumes.
# - Exit status: cleansweep's (0 done, 1 failure, 2 bad input, 3 stopped early), or 2 for bad use.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=${CLEANSWEEP_BIN:-$here/../../build/bin}
say() { echo "cleansweep-slurm: $*"; }
die() { echo "cleansweep-slurm: error: $*" >&2; exit 2; }

[ $# -ge 1 ] || die "usage: launch.sh CONFIG [cleansweep run options]"
[ -n "${SLURM_JOB_ID:-}" ] || die "not inside a Slurm job: submit sweep.sbatch or array.sbatch with sbatch (outside Slurm: mpirun -np N $bin/cleansweep run CONFIG)"
[ -x "$bin/cleansweep" ] || die "$bin/cleansweep not found: build it (scripts/build.sh) or set CLEANSWEEP_BIN to its folder"
config=$1
shift

# How many GPUs each node of the job has, in the job's node order.
declare -A gpus_on
while read -r node count; do
  gpus_on[$node]=$count
done < <(srun --ntasks="$SLURM_JOB_NUM_NODES" --ntasks-per-node=1 --overcommit --mpi=none \
  bash -c 'echo "$SLURMD_NODENAME ${SLURM_GPUS_ON_NODE:-0}"')
layout=${TMPDIR:-/tmp}/cleansweep-tasks.$SLURM_JOB_ID.${SLURM_RESTART_COUNT:-0}
trap 'rm -f "$layout" "${CLEANSWEEP_COORDINATOR_PID_FILE:-}"' EXIT
for node in $(scontrol show hostnames "$SLURM_JOB_NODELIST"); do
  [ -n "${gpus_on[$node]:-}" ] || die "node $node did not answer the GPU probe"
  echo "$node ${gpus_on[$node]}"
done | "$here/task-layout.sh" > "$layout" || exit 2
ntasks=$(wc -l < "$layout")
say "job $SLURM_JOB_ID: $SLURM_JOB_NUM_NODES node(s), $((ntasks - 1)) workers + 1 coordinator;" \
  "GPUs per node: $(for n in $(scontrol show hostnames "$SLURM_JOB_NODELIST"); do printf '%s=%s ' "$n" "${gpus_on[$n]}"; done)"

# A requeued job (SLURM_RESTART_COUNT > 0) continues its study file instead of refusing it.
resume=()
if [ "${SLURM_RESTART_COUNT:-0}" -gt 0 ]; then
  resume=(--resume)
  say "restart ${SLURM_RESTART_COUNT} of job $SLURM_JOB_ID: resuming the study"
fi

# The coordinator (rank 0, on this node) writes its pid here. SIGUSR1 goes to it alone: srun
# would pass a signal to every process of the step, the trials too, which would cut them off
# instead of letting them finish within trial.stop_grace.
export CLEANSWEEP_COORDINATOR_PID_FILE=${TMPDIR:-/tmp}/cleansweep-coordinator.$SLURM_JOB_ID.pid
stop=""
on_usr1() {
  stop=usr1
  say "SIGUSR1: the time limit is near; stopping gracefully"
  local pid
  pid=$(cat "$CLEANSWEEP_COORDINATOR_PID_FILE" 2> /dev/null) || pid=""
  if [ -n "$pid" ] && kill -USR1 "$pid" 2> /dev/null; then return; fi
  kill -USR1 "$srun_pid" 2> /dev/null  # the coordinator is not up yet: every task, through srun
}
on_term() {
  stop=term  # Slurm signals the tasks itself; passing it on would make it a second, immediate stop
  say "SIGTERM: the job is being ended (scancel, preemption or requeue); the tasks stop gracefully"
}
trap on_usr1 USR1
trap on_term TERM

# SLURM_NTASKS_PER_NODE from the job would contradict the layout; the layout decides.
env -u SLURM_NTASKS_PER_NODE SLURM_HOSTFILE="$layout" \
  srun --mpi=pmix --distribution=arbitrary --ntasks="$ntasks" --overcommit --kill-on-bad-exit=0 \
  "$bin/cleansweep" run "$config" --progress lines "${resume[@]}" "$@" &
srun_pid=$!
while :; do
  wait "$srun_pid"
  code=$?
  kill -0 "$srun_pid" 2> /dev/null || break  # a signal interrupted wait; srun still runs
done
say "cleansweep exited with status $code"

if [ "$code" = 3 ] && [ "$stop" = usr1 ]; then
  if scontrol show job "$SLURM_JOB_ID" 2> /dev/null | grep -q 'Requeue=1'; then
    say "requeueing job $SLURM_JOB_ID; its next start resumes the study"
    scontrol requeue "$SLURM_JOB_ID" && exit 0
    say "scontrol requeue failed; continue later with: cleansweep resume STUDY"
  else
    say "the job is not requeueable (sbatch --requeue); continue later with: cleansweep resume STUDY"
  fi
fi
exit "$code"
