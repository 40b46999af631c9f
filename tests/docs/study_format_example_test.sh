#!/bin/bash
# Runs the h5py + pandas example of docs/study-format.md against a study written by a real sweep,
# so the schema document cannot drift from the file we write.
# usage: study_format_example_test.sh BIN_DIR SOURCE_DIR
set -euo pipefail
bin=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
mpi=(mpirun --oversubscribe)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
export OMPI_MCA_btl_vader_single_copy_mechanism=none
cat > doc.yaml <<YAML
study: {name: doc, direction: maximize, metric: val_accuracy, n_trials: 6, storage: $work/doc.h5}
trial: {command: ["$bin/toy_trial"]}
space:
  x: {type: float, low: 0.0, high: 1.0}
  opt: {type: categorical, choices: [a, b]}
  lr: {type: float, low: 0.001, high: 0.1, log: true, when: {opt: b}}
YAML
"${mpi[@]}" -np 3 "$bin/cleansweep" run doc.yaml > /dev/null
# The first ```python block after the "tested example" marker, pointed at our file.
awk '/<!-- tested example/ {on = 1} on && /^```python/ {code = 1; next} code && /^```/ {exit} code {print}' \
  "$src/docs/study-format.md" | sed "s#results/fashion-quick.h5#$work/doc.h5#" > example.py
[ -s example.py ] || { echo "FAIL: no tested example in docs/study-format.md"; exit 1; }
/usr/bin/python3 example.py > example.txt
cat example.txt
grep -q "val_accuracy" example.txt
echo "PASS: docs example"
