#!/bin/bash
# Merges the study files of the N shards of CONFIG into the unsharded study's file:
#   merge-shards.sh CONFIG N [cleansweep run options, as given to the shards]
# Of the options only `--set KEY=VALUE` matters (study.storage or study.name move the files).
# submit-array.sh runs it as a job that waits for the array; it runs as well by hand.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=${CLEANSWEEP_BIN:-$here/../../build/bin}
[ $# -ge 2 ] || { echo "usage: merge-shards.sh CONFIG N [--set KEY=VALUE ...]" >&2; exit 2; }
config=$1 n=$2
shift 2
sets=()
while [ $# -gt 0 ]; do
  case $1 in
    --set) [ $# -ge 2 ] && sets+=(--set "$2") && shift ;;
    --set=*) sets+=(--set "${1#--set=}") ;;
  esac
  shift
done
"$bin/cleansweep" validate "$config" "${sets[@]}" > /dev/null  # a bad config says so here, with its message
storage_of() {
  "$bin/cleansweep" validate "$config" "${sets[@]}" "$@" | sed -n 's/^storage   //p' |
    sed 's/ (exists: run --resume continues it)$//'
}
out=$(storage_of)
shards=()
for ((k = 0; k < n; k++)); do shards+=("$(storage_of --set "study.shard=$k/$n")"); done
[ -n "$out" ] && [ -n "${shards[0]}" ] || { echo "merge-shards.sh: cannot tell the study files of $config" >&2; exit 2; }
exec "$bin/cleansweep" merge "$out" "${shards[@]}"
