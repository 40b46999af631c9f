#!/bin/bash
# The README's main job: installs what is missing, builds, and tunes the bundled Fashion-MNIST CNN
# on this machine (1 coordinator + 2 workers, CPU or GPU). Each run writes a new study file.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
study="results/fashion-quick-$(date +%Y%m%d-%H%M%S).h5"
mpi=(mpirun -np 3 --oversubscribe)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
"${mpi[@]}" build/bin/cleansweep run configs/quickstart.yaml --set "study.storage=$study" "$@"
echo
build/bin/cleansweep show "$study" --top 5
echo
build/bin/cleansweep report "$study"
echo "Open the report in a browser: ${study%.h5}.html"
echo "Read it in Python: see docs/study-format.md, or: build/bin/cleansweep export $study --format csv"
