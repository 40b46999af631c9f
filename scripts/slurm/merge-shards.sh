#!/bin/bash
# Merges the study files of the N shards of CONFIG into the unsharded study file (or OUT):
#   merge-shards.sh CONFIG N [OUT]
# submit-array.sh runs it as a job that waits for the array; it runs as well by hand.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=${CLEANSWEEP_BIN:-$here/../../build/bin}
[ $# -ge 2 ] || { echo "usage: merge-shards.sh CONFIG N [OUT]" >&2; exit 2; }
config=$1 n=$2
storage_of() { "$bin/cleansweep" validate "$config" "$@" | sed -n 's/^storage   //p' | sed 's/ (exists: run --resume continues it)$//'; }
out=${3:-$(storage_of)}
shards=()
for ((k = 0; k < n; k++)); do shards+=("$(storage_of --set "study.shard=$k/$n")"); done
exec "$bin/cleansweep" merge "$out" "${shards[@]}"
