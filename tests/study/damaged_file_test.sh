#!/bin/bash
# Damaged study files are refused in seconds (issue 15): `damaged_file_test.sh BIN_DIR SOURCE_DIR [CASES]`.
# A real study file is damaged in CASES seeded ways of each kind (truncation, zeroed header, the
# issue's "64 random bytes every ~1 KB after 2 KB", bit flips, a random 256-byte block in the
# metadata or in the data chunks), and every reader — show, export (CSV and JSON), report, merge,
# resume under mpirun (every 4th case) and the pandas loader — must, within 10 s, either exit 2
# naming the path and saying "damaged", or (where the damage hit bytes nothing reads) give
# exactly the intact file's answer. Nothing may crash, hang or leave an output behind.
set -uo pipefail
bin=$1 src=$2 cases=${3:-12}
# shellcheck source=../support/mpi_env.sh
source "$src/tests/support/mpi_env.sh"

cat > c.yaml <<YAML
study: {name: d, direction: maximize, n_trials: 40, storage: results/d.h5}
sampler: {kind: random, seed: 3}
trial: {command: ["$bin/toy_trial"], timeout: 30s}
space:
  x: {type: float, low: 0.0, high: 1.0}
  n: {type: int, low: 1, high: 8}
  opt: {type: categorical, choices: [a, b]}
  mode: {type: categorical, choices: [ok, fail, curve]}
YAML
# Shard 0 of 2, so that merge reads it as it would on a cluster.
"${mpi[@]}" -np 3 "$bin/cleansweep" run c.yaml --shard 0/2 > run.log 2>&1 || { cat run.log; fail "could not make the study"; }
mv results/d-shard-0-of-2.h5 results/d.h5
cp results/d.h5 bad.h5  # the intact answers, under the name the damaged copies will have
"$bin/cleansweep" show bad.h5 > intact.show || fail "the intact study does not show"
"$bin/cleansweep" export bad.h5 > intact.csv || fail "the intact study does not export"

# One reader on one damaged file: exit 2 + "damaged" + the path, or, where show and the CSV export
# gave the intact file's answers (the damage hit bytes nothing reads), exit 0.
check() {  # name, expected output file or "", command...
  local name=$1 intact=$2
  shift 2
  local started=$SECONDS
  timeout -s KILL 10 "$@" > out.txt 2> err.txt
  local status=$?
  [ $status -eq 137 ] && fail "$name: still running after 10 s: $*"
  if [ $status -eq 2 ]; then
    grep -q "damaged" err.txt && grep -q "bad.h5" err.txt || fail "$name: exit 2 without 'damaged' and the path: $(cat err.txt)"
    refused=$((refused + 1))
    case_refused=1
  elif [ $status -eq 0 ] && [ -n "$intact" ] && cmp -s out.txt "$intact"; then
    harmless=$((harmless + 1))
  elif [ $status -eq 0 ] && [ -z "$intact" ] && [ $case_refused = 0 ]; then
    harmless=$((harmless + 1))
  else
    fail "$name: exit $status after $((SECONDS - started)) s (show and CSV export $([ $case_refused = 1 ] && echo refused || echo read) it): $*: $(head -c 400 err.txt)"
  fi
}

refused=0 harmless=0
for kind in truncate zero_header every_kb flips meta_block data_block; do
  for ((seed = 0; seed < cases; seed++)); do
    $py "$src/tests/study/damage.py" results/d.h5 bad.h5 "$kind" "$seed" || fail "damage.py $kind $seed"
    name="$kind/$seed"
    case_refused=0
    check "$name show" intact.show "$bin/cleansweep" show bad.h5
    check "$name export" intact.csv "$bin/cleansweep" export bad.h5
    rm -f out.json
    check "$name export json" "" "$bin/cleansweep" export bad.h5 --format json -o out.json
    rm -f out.html
    check "$name report" "" "$bin/cleansweep" report bad.h5 -o out.html
    rm -f merged.h5
    check "$name merge" "" "$bin/cleansweep" merge --allow-missing merged.h5 bad.h5
    [ -e merged.h5 ] && [ "$(grep -c damaged err.txt)" -gt 0 ] && fail "$name: a refused merge left merged.h5"
    # Outputs are written as .NAME.partial-PID and renamed: none may survive a refusal.
    leftovers=$(find . -maxdepth 1 \( -name '.*.partial-*' -o -name '*.partial' -o -name '.*.merging-*' \))
    [ -z "$leftovers" ] || fail "$name: a temporary output was left behind: $leftovers"
    if ((seed % 4 == 0)); then
      cp bad.h5 resume.h5.orig
      check "$name resume" "" "${mpi[@]}" -np 2 "$bin/cleansweep" resume bad.h5 --set study.n_trials=41
      rm -rf bad.trials
    fi
    check "$name load_study" "" $py -c "
import sys; sys.path.insert(0, '$src/python')
import cleansweep_study as cs
try:
    cs.load_study('bad.h5')
except cs.DamagedStudyError as e:
    print(e, file=sys.stderr); sys.exit(2)
except (ValueError, OSError) as e:
    print('bad.h5: damaged?', type(e).__name__, e, file=sys.stderr); sys.exit(2)
"
  done
done
echo "damaged files: $refused refusals, $harmless reads of harmless damage identical to the intact file"
[ $refused -gt 0 ] || fail "no damage was ever detected"
