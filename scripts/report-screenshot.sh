#!/bin/bash
# Makes docs/report.png, the README's picture of the report, from a real run: the quickstart's
# Fashion-MNIST sweep (TPE, ASHA pruning, 16 trials of 4 epochs; about 4 minutes on 2 cores) into
# results/report-screenshot.h5, then `cleansweep report` and a headless-Chromium screenshot.
#   scripts/report-screenshot.sh [N_TRIALS]     a new sweep
#   scripts/report-screenshot.sh --reuse        the picture again from the last sweep's file
set -euo pipefail
cd "$(dirname "$0")/.."
trials=${1:-16}
study=results/report-screenshot.h5
command -v chromium > /dev/null || { echo "report-screenshot.sh: needs chromium (apt-get install chromium)" >&2; exit 2; }
[ -x build/bin/cleansweep ] || scripts/build.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpi=(mpirun -np 3 --oversubscribe)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
if [ "$trials" != --reuse ]; then
  rm -rf "$study" "${study%.h5}.trials"
  "${mpi[@]}" build/bin/cleansweep run configs/quickstart.yaml --progress lines --set "study.storage=$study" \
    --set study.n_trials="$trials" --set sampler.kind=tpe --set sampler.n_startup_trials=6 --set space.epochs=4 \
    --set pruner.kind=asha --set pruner.min_resource=1 --set pruner.reduction_factor=2
fi
build/bin/cleansweep report "$study" -o "$work/report.html"
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
  --disable-component-update --disable-sync --hide-scrollbars "--user-data-dir=$work/profile" \
  --window-size=1280,2700 "--screenshot=$work/report.png" "file://$work/report.html" 2> /dev/null
mv "$work/report.png" docs/report.png
echo "docs/report.png: the report of $study ($(date -u +%Y-%m-%d))"
