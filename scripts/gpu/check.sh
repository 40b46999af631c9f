#!/bin/bash
# The GPU proof, in a few minutes on a machine with an NVIDIA GPU and no network (docs/gpu.md):
#  1. builds cleansweep and the trainer against the CUDA libtorch found there (LIBTORCH=/path to
#     an unpacked libtorch archive, or the one inside the Python `torch` package);
#  2. runs a sweep of N trials (default 20) of the Fashion-MNIST CNN on the GPUs, one worker per
#     GPU, every trial a fresh process, and prints per trial the GPU memory before, peak and after;
#  3. as the contrast, trains the same configurations one after another in ONE process (a plain
#     for-loop) and prints the GPU's used memory after each model;
#  4. runs a few trials again with trial.launcher: forkserver (the trainer's plugin, forked per
#     trial from a server that loaded the CUDA libtorch but never initialised CUDA).
#   scripts/gpu/check.sh [N_TRIALS]
# Needs the build dependencies of scripts/install-deps.sh (Open MPI, HDF5, yaml-cpp, ...); without a
# network, unpack their Debian packages into a folder and set CLEANSWEEP_DEPS_ROOT to it.
set -euo pipefail
cd "$(dirname "$0")/../.."
trials=${1:-20}
say() { echo "== $*"; }
die() { echo "check.sh: $*" >&2; exit 2; }

command -v nvidia-smi > /dev/null || die "no nvidia-smi: this machine has no NVIDIA driver"
nvidia-smi -L || die "nvidia-smi lists no GPU"
gpus=$(nvidia-smi -L | grep -c '^GPU ')
if [ -n "${CLEANSWEEP_DEPS_ROOT:-}" ]; then  # Debian packages unpacked with dpkg -x
  export PATH=$CLEANSWEEP_DEPS_ROOT/usr/bin:$PATH
  export LD_LIBRARY_PATH=$CLEANSWEEP_DEPS_ROOT/usr/lib/x86_64-linux-gnu:$CLEANSWEEP_DEPS_ROOT/usr/lib/x86_64-linux-gnu/openmpi/lib:${LD_LIBRARY_PATH:-}
  export OPAL_PREFIX=$CLEANSWEEP_DEPS_ROOT/usr
fi
prefix=${LIBTORCH:-}
if [ -z "$prefix" ]; then
  prefix=$(python3 -c 'import torch; assert torch.cuda.is_available(); print(torch.utils.cmake_prefix_path)' 2> /dev/null) ||
    die "no CUDA libtorch: set LIBTORCH to an unpacked libtorch (CUDA build), or install PyTorch with CUDA"
fi
say "CUDA libtorch from $prefix; $gpus GPU(s)"
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCLEANSWEEP_BUILD_TESTS=OFF \
  "-DCMAKE_PREFIX_PATH=$prefix${CLEANSWEEP_DEPS_ROOT:+;$CLEANSWEEP_DEPS_ROOT/usr}" > build-gpu.log 2>&1 ||
  { tail -30 build-gpu.log; die "configuring failed (build-gpu.log)"; }
cmake --build build-gpu --parallel "$(nproc)" --target cleansweep cleansweep-train-fashion \
  cleansweep-train-fashion-plugin >> build-gpu.log 2>&1 ||
  { tail -30 build-gpu.log; die "building failed (build-gpu.log)"; }
bin=$PWD/build-gpu/bin
ldd "$bin/cleansweep-train-fashion" | grep -q 'libtorch_cuda\|libc10_cuda' || die "the trainer did not link a CUDA libtorch"

study=$PWD/results/gpu-check-$(date -u +%Y%m%d-%H%M%S).h5
mpi=(mpirun -np $((gpus + 1)) --oversubscribe)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
say "sweep: $trials trials, 1 coordinator + $gpus worker(s), one GPU each"
PATH=$bin:$PATH "${mpi[@]}" "$bin/cleansweep" run configs/fashion_cnn_gpu.yaml --progress lines \
  --set "study.storage=$study" --set study.n_trials="$trials" --set study.time_budget=20m \
  --set "trial.command=[$bin/cleansweep-train-fashion, --val-size, '5000', --subset, '20000', --device, cuda]" \
  --set "space.epochs={type: int, low: 1, high: 3}"
"$bin/cleansweep" export "$study" --format json -o "$study.json"
say "per trial GPU memory (MiB, NVML): before / peak / after"
python3 - "$study.json" "$study.loop" << 'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
fmt = lambda v: "-" if v is None else f"{v:.0f}"
with open(sys.argv[2], "w") as loop:
    for t in doc["trials"]:
        print(f"trial {t['number']:3d} {t['state']:9s} gpu {t['gpu'] or '-':>3s}  before {fmt(t['gpu_mem_before_mb']):>6s}"
              f"  peak {fmt(t['gpu_mem_peak_mb']):>6s}  after {fmt(t['gpu_mem_after_mb']):>6s}"
              f"  foreign {fmt(t['gpu_mem_foreign_mb']):>5s}  {t['value'] if t['value'] is not None else t['reason'][:60]}")
        loop.write(json.dumps(t["params"]) + "\n")
PY
say "contrast: the same $trials models one after another in ONE process (GPU 0's used memory after each)"
CUDA_VISIBLE_DEVICES=0 CUDA_DEVICE_ORDER=PCI_BUS_ID "$bin/cleansweep-train-fashion" --loop-params "$study.loop" \
  --val-size 5000 --subset 20000 --device cuda 2> "$study.loop.log" | grep '^loop model'
fork_trials=$(( trials < 6 ? trials : 6 ))
say "fork server: $fork_trials trials forked from the trainer's plugin, each with its own CUDA context"
PATH=$bin:$PATH "${mpi[@]}" "$bin/cleansweep" run configs/fashion_cnn_gpu.yaml --progress lines \
  --set "study.storage=${study%.h5}-fork.h5" --set study.n_trials="$fork_trials" --set study.time_budget=10m \
  --set trial.launcher=forkserver \
  --set "trial.command=[$PWD/build-gpu/lib/cleansweep-train-fashion.so, --val-size, '5000', --subset, '20000', --device, cuda]" \
  --set "space.epochs={type: int, low: 1, high: 3}"
"$bin/cleansweep" show "${study%.h5}-fork.h5"
say "study files: $study and ${study%.h5}-fork.h5 (cleansweep report FILE)"
