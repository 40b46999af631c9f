#!/bin/bash
# The subcommands that need no MPI: validate, show, export, and the command line itself.
# usage: cli_test.sh BIN_DIR SOURCE_DIR
set -euo pipefail
bin=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() {  # expect STATUS PATTERN COMMAND...: exit status and a line of stderr+stdout
  local status=$1 pattern=$2
  shift 2
  set +e
  "$@" > out.txt 2>&1
  local code=$?
  set -e
  [ $code = "$status" ] || fail "$* exited $code, expected $status: $(cat out.txt)"
  grep -q -- "$pattern" out.txt || fail "$*: no '$pattern' in: $(cat out.txt)"
}

cp -r "$src/configs" "$src/python" .
# Every shipped config validates and shows its resolved space.
expect 0 "lr: float \[0.0001, 0.1\] log" "$bin/cleansweep" validate configs/quickstart.yaml
expect 0 "momentum: float \[0.0, 0.99\]  when optimizer in {sgd}" "$bin/cleansweep" validate configs/quickstart.yaml
expect 0 "valid" "$bin/cleansweep" validate configs/fashion_cnn_gpu.yaml
expect 0 "valid" "$bin/cleansweep" validate configs/python_example.yaml
expect 0 "study     fashion-quick: maximize val_accuracy, 8 trials" \
  "$bin/cleansweep" validate configs/quickstart.yaml --set study.n_trials=8
expect 0 "channels: int \[8, 48\] step 8" "$bin/cleansweep" validate configs/quickstart.yaml

# Bad input: status 2, the file, line and key, nothing created.
sed 's/low: 1.0e-4, high: 0.1, log: true/low: 0, high: 0.1, log: true/' configs/quickstart.yaml > logzero.yaml
expect 2 "logzero.yaml:22:34:.*space.lr.low: a log scale needs low > 0" "$bin/cleansweep" validate logzero.yaml
expect 2 "quickstart.yaml: trial.command\[0\]: program 'nope' not found" \
  "$bin/cleansweep" validate configs/quickstart.yaml --set 'trial.command=[nope]'
expect 2 "not an executable file" "$bin/cleansweep" validate configs/quickstart.yaml --set 'trial.command=[python/cleansweep_trial.py]'
expect 2 "unknown sampler 'tpe2'" "$bin/cleansweep" validate configs/quickstart.yaml --set sampler.kind=tpe2
# trial.launcher forkserver: command[0] is a plugin, looked up where plugins are built and installed.
expect 2 "trial.command\[0\]: plugin 'nope.so' not found in $bin" \
  "$bin/cleansweep" validate configs/quickstart.yaml --set trial.launcher=forkserver --set 'trial.command=[nope.so]'
expect 2 "plugin './nope.so' is not a readable file" \
  "$bin/cleansweep" validate configs/quickstart.yaml --set trial.launcher=forkserver --set 'trial.command=[./nope.so]'
expect 2 "trial.launcher: expected spawn" "$bin/cleansweep" validate configs/quickstart.yaml --set trial.launcher=exec
expect 2 "cannot open the config file" "$bin/cleansweep" validate missing.yaml
mkdir -p results && echo keep > results/fashion-quick.h5
expect 0 "results/fashion-quick.h5 (exists: run --resume continues it)" "$bin/cleansweep" validate configs/quickstart.yaml
[ "$(cat results/fashion-quick.h5)" = keep ] || fail "validate touched an existing study file"
[ ! -e results/fashion-quick.trials ] || fail "validate created a trials folder"
# A shard: its part of the trials and its own file.
expect 0 "shard     2/5: 2 of the 12 trials" "$bin/cleansweep" validate configs/quickstart.yaml --set study.shard=2/5
expect 0 "storage   results/fashion-quick-shard-2-of-5.h5$" "$bin/cleansweep" validate configs/quickstart.yaml --set study.shard=2/5
expect 0 "trials in $PWD/results/fashion-quick-shard-2-of-5.trials/<number>/$" \
  "$bin/cleansweep" validate configs/quickstart.yaml --set study.shard=2/5
# study.trials_dir: the trial folders elsewhere, in a folder of the study's own; one that cannot
# be made is bad input, named.
expect 0 "trials in /tmp/elsewhere/fashion-quick.trials/<number>/$" \
  "$bin/cleansweep" validate configs/quickstart.yaml --set study.trials_dir=/tmp/elsewhere
expect 2 "study.trials_dir: $PWD/results/fashion-quick.h5 cannot hold the trial folders .*(not a folder); choose another study.trials_dir" \
  "$bin/cleansweep" validate configs/quickstart.yaml --set study.trials_dir=results/fashion-quick.h5/sub
expect 2 "error: --set study.shard: shard '5/5': K counts from 0" \
  "$bin/cleansweep" validate configs/quickstart.yaml --set study.shard=5/5

# The command line itself: every subcommand's --help shows an example of it.
expect 0 "Examples:" "$bin/cleansweep" --help
for sub in run resume validate show export merge report; do
  expect 0 "^  .*cleansweep $sub " "$bin/cleansweep" $sub --help
done
expect 2 "" "$bin/cleansweep" frobnicate
expect 2 "" "$bin/cleansweep" export x.h5 --format xml
expect 0 "cleansweep 0" "$bin/cleansweep" --version
expect 0 "validate" "$bin/cleansweep" --help

# show and export on files that are not studies.
expect 2 "no such study file" "$bin/cleansweep" show none.h5
expect 2 "not an HDF5 file" "$bin/cleansweep" show results/fashion-quick.h5
expect 2 "no such study file" "$bin/cleansweep" export none.h5 -o x.csv
[ ! -e x.csv ] && [ ! -e x.csv.partial ] || fail "export left a file behind"

# Outputs that are not plain files. A device, a pipe or a link is written through, never replaced
# by a file renamed over it (as root, `-o /dev/full` once left a regular file in /dev); output that
# cannot be written is status 1 with the reason, never 0.
cp "$src/tests/fuzz/corpus/study_reader/six_trials.h5" six.h5
"$bin/cleansweep" export six.h5 -o /dev/stdout > through_stdout.csv
head -1 through_stdout.csv | grep -q "^number,state," || fail "export -o /dev/stdout wrote: $(head -c 200 through_stdout.csv)"
[ -L /dev/stdout ] || fail "/dev/stdout is no longer a link"
ln -s target.csv link.csv
"$bin/cleansweep" export six.h5 -o link.csv
[ -L link.csv ] && cmp -s target.csv through_stdout.csv || fail "export -o LINK replaced the link or wrote elsewhere"
mkfifo pipe.csv
timeout 20 cat pipe.csv > from_pipe.csv &  # a pipe replaced by a file would leave this waiting
"$bin/cleansweep" export six.h5 -o pipe.csv
wait
[ -p pipe.csv ] && cmp -s from_pipe.csv through_stdout.csv || fail "export -o FIFO replaced the pipe or lost data"
if [ -c /dev/full ]; then
  expect 1 "/dev/full: writing failed: No space left on device" "$bin/cleansweep" export six.h5 -o /dev/full
  expect 1 "the report: /dev/full: writing failed: No space left on device" "$bin/cleansweep" report six.h5 -o /dev/full
  for command in "show six.h5" "export six.h5" "validate configs/quickstart.yaml"; do
    set +e
    "$bin/cleansweep" $command > /dev/full 2> err.txt
    code=$?
    set -e
    [ $code = 1 ] && grep -q "error: .*standard output" err.txt || fail "$command > /dev/full exited $code: $(cat err.txt)"
  done
  [ -c /dev/full ] || fail "/dev/full is no longer a device"
fi
echo "PASS: cli"
