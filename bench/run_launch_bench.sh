#!/bin/bash
# Per-trial launch overhead, one run, three ways (bench/README.md, "Launch overhead"):
#   spawn       the trainer executable, exec'd per trial (trial.launcher: spawn)
#   forkserver  the trainer plugin, forked per trial from the fork server (trial.prefork: false)
#   preforked   the same, each trial begun as a standby child forked while the one before ran
#               (trial.prefork: true, the default)
#   python      multiprocessing's spawn start method + `import torch` per trial (Debian's python3-torch)
# Every trial does no work (--startup-only: one tensor, one report, exit). Prints median and p95
# of launch -> first report and launch -> exit, and the ratios to the fork server.
# Then launch -> first training batch (--first-batch-only: the data set loaded, one batch of 64
# trained, its loss reported): spawned, forked with the data set preloaded by the plugin's prepare
# hook, and forked without it (CLEANSWEEP_FASHION_PRELOAD=0) (bench/README.md, "Data loaded once").
#   bench/run_launch_bench.sh [BUILD_DIR] [TRIALS]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
trials=${2:-30}
for f in "$build/bin/launch_bench" "$build/bin/cleansweep-train-fashion" "$build/lib/cleansweep-train-fashion.so"; do
  [ -e "$f" ] || { echo "missing $f: build with the trainer (cmake --build $build)" >&2; exit 2; }
done
if ! /usr/bin/python3 -c "import torch" 2> /dev/null; then
  echo "installing Debian's python3-torch for the Python recipe" >&2
  sudo=()
  [ "$(id -u)" = 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get install -y --no-install-recommends python3-torch > /dev/null
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$build/bin/launch_bench" --launcher spawn --program "$build/bin/cleansweep-train-fashion" --trials "$trials" \
  --args --startup-only > "$out/spawn.tsv"
for kind in forkserver preforked; do
  "$build/bin/launch_bench" --launcher $kind --program "$build/lib/cleansweep-train-fashion.so" \
    --trials "$trials" --args --startup-only > "$out/$kind.tsv"
done
/usr/bin/python3 "$src/bench/python_spawn_recipe.py" "$trials" > "$out/python.tsv"
grep -h '^#' "$out"/*.tsv
/usr/bin/python3 - "$out" << 'PY'
import sys
import pandas as pd

out = sys.argv[1]
rows = {k: pd.read_csv(f"{out}/{k}.tsv", sep="\t", comment="#") for k in ("spawn", "forkserver", "preforked", "python")}
print(f"{'launcher':<12} {'trials':>6} {'first report ms':>22} {'exit ms':>22}")
print(f"{'':<12} {'':>6} {'median':>10} {'p95':>11} {'median':>10} {'p95':>11}")
for k, df in rows.items():
    f, e = df["first_report_ms"], df["exit_ms"]
    print(f"{k:<12} {len(df):>6} {f.median():>10.1f} {f.quantile(0.95):>11.1f} {e.median():>10.1f} {e.quantile(0.95):>11.1f}")
fork = rows["forkserver"]["exit_ms"]
for k in ("spawn", "preforked", "python"):
    e = rows[k]["exit_ms"]
    print(f"{k} / forkserver, launch to exit: median {e.median() / fork.median():.1f}x, p95 {e.quantile(0.95) / fork.quantile(0.95):.1f}x")
PY

batch=(--args=--first-batch-only --args=--subset=3000)  # the quickstart's training subset
"$build/bin/launch_bench" --launcher spawn --program "$build/bin/cleansweep-train-fashion" --trials "$trials" \
  "${batch[@]}" > "$out/batch-spawn.tsv"
for kind in forkserver preforked; do
  "$build/bin/launch_bench" --launcher $kind --program "$build/lib/cleansweep-train-fashion.so" \
    --trials "$trials" "${batch[@]}" > "$out/batch-$kind.tsv"
done
CLEANSWEEP_FASHION_PRELOAD=0 "$build/bin/launch_bench" --launcher forkserver \
  --program "$build/lib/cleansweep-train-fashion.so" --trials "$trials" "${batch[@]}" \
  > "$out/batch-forkserver-nopreload.tsv"
/usr/bin/python3 - "$out" << 'PY'
import sys
import pandas as pd

out = sys.argv[1]
names = {"batch-spawn": "spawn", "batch-forkserver": "forkserver, data preloaded",
         "batch-preforked": "preforked, data preloaded",
         "batch-forkserver-nopreload": "forkserver, each trial reads the data"}
rows = {k: pd.read_csv(f"{out}/{k}.tsv", sep="\t", comment="#") for k in names}
print()
print(f"{'launch to first training batch':<40} {'trials':>6} {'median ms':>10} {'p95 ms':>8}")
for k, df in rows.items():
    f = df["first_report_ms"]
    print(f"{names[k]:<40} {len(df):>6} {f.median():>10.1f} {f.quantile(0.95):>8.1f}")
fork = rows["batch-forkserver"]["first_report_ms"].median()
for k in ("batch-spawn", "batch-preforked", "batch-forkserver-nopreload"):
    print(f"{names[k]} / preloaded forkserver: median {rows[k]['first_report_ms'].median() / fork:.1f}x")
PY
