#!/bin/bash
# Cuts a sweep into a job array of N shards and submits a merge job that runs when every shard
# has finished:
#   scripts/slurm/submit-array.sh CONFIG N [sbatch options ...] [-- cleansweep run options ...]
# e.g. scripts/slurm/submit-array.sh configs/fashion_cnn_gpu.yaml 8 --partition=gpu --time=2:00:00
# Prints the two job ids. The merged study is the config's study.storage; the shards' files
# (…-shard-K-of-N.h5) stay next to it. Run from the repository root, or set CLEANSWEEP_HOME.
# The shards share what they learn (study.share_every, 30 s by default: docs/slurm.md): with a
# model-based sampler they are one search of n_trials; more jobs can join it later with
# scripts/slurm/join.sbatch CONFIG. Pass -- --set study.share_every=0 for independent shards.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ $# -ge 2 ] || { echo "usage: submit-array.sh CONFIG N [sbatch options ...] [-- cleansweep run options ...]" >&2; exit 2; }
config=$1 n=$2
shift 2
case $n in '' | *[!0-9]* | 0) echo "submit-array.sh: N must be a positive number, got '$n'" >&2; exit 2 ;; esac
sbatch_options=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do sbatch_options+=("$1"); shift; done
[ $# -gt 0 ] && shift  # the --
bin=${CLEANSWEEP_BIN:-$here/../../build/bin}
"$bin/cleansweep" validate "$config" --set "study.shard=0/$n" > /dev/null  # a bad config fails here, not in N jobs
array=$(sbatch --parsable --array="0-$((n - 1))" "${sbatch_options[@]}" "$here/array.sbatch" "$config" "$@")
array=${array%%;*}
merge=$(sbatch --parsable --dependency="afterok:$array" --kill-on-invalid-dep=yes --job-name=cleansweep-merge \
  --nodes=1 --ntasks=1 --time=1:00:00 --output="slurm-cleansweep-merge-%j.out" \
  --wrap="$(printf '%q ' "$here/merge-shards.sh" "$config" "$n" "$@")")
merge=${merge%%;*}
echo "array job $array: $n shards of $config"
echo "merge job $merge: runs when every shard has finished"
