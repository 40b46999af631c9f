#!/bin/bash
# Where each MPI task of a sweep runs: reads "NODE GPUS" lines (the job's nodes, first node
# first) and writes one node name per task, in rank order, for srun --distribution=arbitrary:
# the first node gets the coordinator (rank 0) and one worker per GPU, every other node one
# worker per GPU. A node without GPUs gets $CLEANSWEEP_CPU_WORKERS workers (default 1).
set -euo pipefail
first=1
while read -r node gpus _; do
  [ -n "$node" ] || continue
  case $gpus in '' | *[!0-9]*) echo "task-layout.sh: node $node: GPU count '$gpus' is not a number" >&2; exit 2 ;; esac
  workers=$gpus
  [ "$workers" -gt 0 ] || workers=${CLEANSWEEP_CPU_WORKERS:-1}
  if [ $first = 1 ]; then
    echo "$node"  # the coordinator
    first=0
  fi
  for ((i = 0; i < workers; i++)); do echo "$node"; done
done
if [ $first = 1 ]; then
  echo "task-layout.sh: no nodes on standard input" >&2
  exit 2
fi
