#!/bin/bash
# cmake --install, then an outside project (examples/cpp_trainer/) that finds the installed
# package with find_package(cleansweep), links cleansweep::trial, and runs in a sweep started
# with the installed cleansweep. usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
source "$src/tests/support/mpi_env.sh"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" > "$work/install.log" 2>&1 || { cat "$work/install.log"; fail "cmake --install"; }
for f in bin/cleansweep bin/cleansweep-forkserver include/cleansweep/trial.hpp share/cleansweep/python/cleansweep_trial.py \
  share/cleansweep/python/cleansweep_study.py; do
  [ -e "$prefix/$f" ] || fail "not installed: $f"
done
config=$(find "$prefix" -name cleansweepConfig.cmake)
[ -n "$config" ] || fail "no cleansweepConfig.cmake under $prefix"
[ -e "$(dirname "$config")/cleansweepConfigVersion.cmake" ] || fail "no version file"

generator=()
command -v ninja > /dev/null && generator=(-G Ninja)
cmake -S "$src/examples/cpp_trainer" -B "$work/example" "${generator[@]}" -DCMAKE_PREFIX_PATH="$prefix" \
  > "$work/configure.log" 2>&1 || { cat "$work/configure.log"; fail "configuring the example"; }
cmake --build "$work/example" > "$work/build.log" 2>&1 || { cat "$work/build.log"; fail "building the example"; }
# It must not have seen the source tree: the header came from the installed prefix.
grep -q "$prefix/include" "$work/example/CMakeFiles/logreg-trainer.dir/flags.make" 2> /dev/null ||
  grep -rq "$prefix/include" "$work/example/build.ninja" 2> /dev/null || fail "the example did not use the installed header"

"${mpi[@]}" -np 3 "$prefix/bin/cleansweep" run "$src/examples/cpp_trainer/sweep.yaml" --progress lines \
  --set "trial.command=[$work/example/logreg-trainer]" --set "study.storage=$work/example.h5" \
  --set study.n_trials=12 > run.txt || { cat run.txt; fail "the sweep exited $?"; }
/usr/bin/python3 - "$work/example.h5" << 'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r", swmr=True) as f:
    t = f["trials"][:]
    steps = f["intermediate"][:]
states = [s.decode().rstrip("\0") for s in t["state"]]
assert len(t) == 12 and set(states) <= {"COMPLETE", "PRUNED"}, states
assert len(steps) >= 12 * 2, "every trial reports each epoch"
best = max(v for v, s in zip(t["value"], states) if s == "COMPLETE")
assert best > 0.8, f"best validation accuracy {best}"
print(f"example sweep: {states.count('COMPLETE')} complete, {states.count('PRUNED')} pruned, best {best:.4f}")
PY

# The example's plugin build, forked by the installed fork server.
"${mpi[@]}" -np 3 "$prefix/bin/cleansweep" run "$src/examples/cpp_trainer/sweep.yaml" --progress lines \
  --set trial.launcher=forkserver --set "trial.command=[$work/example/logreg-trainer.so]" \
  --set "study.storage=$work/example-fork.h5" --set study.n_trials=12 > fork.txt || { cat fork.txt; fail "the fork-server sweep exited $?"; }
grep -q "trials forked by a fork server from $work/example/logreg-trainer.so" fork.txt || fail "no launcher line: $(head -3 fork.txt)"
/usr/bin/python3 - "$work/example-fork.h5" << 'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r", swmr=True) as f:
    t = f["trials"][:]
states = [s.decode().rstrip("\0") for s in t["state"]]
assert len(t) == 12 and set(states) <= {"COMPLETE", "PRUNED"}, states
print(f"example fork-server sweep: {states.count('COMPLETE')} complete, {states.count('PRUNED')} pruned")
PY
echo "PASS: install"
