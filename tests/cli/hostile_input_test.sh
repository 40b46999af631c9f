#!/bin/bash
# Hostile input, table-driven: `hostile_input_test.sh BIN_DIR SOURCE_DIR`.
# Each row sets up a folder from a good config, runs cleansweep (under mpirun where it would start a
# sweep) and requires: the exit status, exactly one "cleansweep: error:" line matching the pattern,
# and no file created, modified or removed in the folder.
set -uo pipefail
bin=$1 src=$2
work=$(mktemp -d)
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
mpi=(mpirun --oversubscribe)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
export OMPI_MCA_btl_vader_single_copy_mechanism=none
py=/usr/bin/python3
run=("${mpi[@]}" -np 2 "$bin/cleansweep" run)

good_config() {
  cat > c.yaml <<YAML
study: {name: h, direction: maximize, n_trials: 4, storage: results/h.h5}
sampler: {kind: random, seed: 1}
trial: {command: ["$bin/toy_trial", "--lr", "{lr}"], timeout: 30s}
space:
  lr: {type: float, low: 1.0e-4, high: 0.1, log: true}
  n: {type: int, low: 1, high: 8}
  opt: {type: categorical, choices: [sgd, adam]}
  m: {type: float, low: 0.0, high: 0.9, when: {opt: sgd}}
YAML
  mkdir -p results
}

# A real study file to resume, made once: 2 finished trials.
mkdir -p "$work/study" && cd "$work/study" && good_config
sed -i 's/n_trials: 4/n_trials: 2/' c.yaml
"${run[@]}" c.yaml > /dev/null 2>&1 || { echo "FAIL: could not make the study to resume"; exit 1; }
sed -i 's/n_trials: 2/n_trials: 4/' c.yaml
study_dir=$work/study

# name | set-up (shell, in a fresh folder holding c.yaml) | command (after "cleansweep") | status | error pattern
cases=$(
  cat <<'TABLE'
malformed yaml | echo 'study: {name: h' > c.yaml | run c.yaml | 2 | c.yaml:2:1: YAML syntax error
yaml not a mapping | echo '- a' > c.yaml | run c.yaml | 2 | c.yaml.*expected a mapping
empty file | : > c.yaml | run c.yaml | 2 | c.yaml.*
wrong type n_trials | sed -i 's/n_trials: 4/n_trials: many/' c.yaml | run c.yaml | 2 | c.yaml:1:.*study.n_trials
wrong type timeout | sed -i 's/timeout: 30s/timeout: 5 apples/' c.yaml | run c.yaml | 2 | c.yaml:3:.*trial.timeout
negative timeout | sed -i 's/timeout: 30s/timeout: -5s/' c.yaml | run c.yaml | 2 | trial.timeout
unknown top-level key | echo 'samplr: {kind: tpe}' >> c.yaml | run c.yaml | 2 | c.yaml:9:.*samplr
unknown study key | sed -i 's/n_trials: 4/n_trial: 4/' c.yaml | run c.yaml | 2 | c.yaml:1:.*n_trial
unknown parameter key | sed -i 's/low: 1, high: 8/lo: 1, high: 8/' c.yaml | run c.yaml | 2 | space.n.*lo
low above high | sed -i 's/low: 1, high: 8/low: 9, high: 8/' c.yaml | run c.yaml | 2 | space.n
log scale from zero | sed -i 's/low: 1.0e-4, high: 0.1/low: 0, high: 0.1/' c.yaml | run c.yaml | 2 | space.lr.low: a log scale needs low > 0
empty space | sed -i '/^  /d; s/^space:$/space: {}/' c.yaml | run c.yaml | 2 | space
no choices | sed -i 's/choices: \[sgd, adam\]/choices: []/' c.yaml | run c.yaml | 2 | space.opt
duplicate choices | sed -i 's/choices: \[sgd, adam\]/choices: [sgd, sgd]/' c.yaml | run c.yaml | 2 | space.opt
condition on unknown parameter | sed -i 's/when: {opt: sgd}/when: {optimizer: sgd}/' c.yaml | run c.yaml | 2 | parameter 'm': `when` names 'optimizer'
parameter name not an identifier | sed -i 's/^  n: /  "batch size": /' c.yaml | run c.yaml | 2 | batch size
parameter name with a dash | sed -i 's/^  n: /  n-layers: /' c.yaml | run c.yaml | 2 | n-layers
placeholder naming no parameter | sed -i 's/{lr}/{learning_rate}/' c.yaml | run c.yaml | 2 | placeholder {learning_rate}
unclosed placeholder | sed -i 's/{lr}/{lr/' c.yaml | run c.yaml | 2 | trial.command\[2\]
missing trial program | sed -i 's#"[^"]*toy_trial"#"no-such-trainer"#' c.yaml | run c.yaml | 2 | program 'no-such-trainer' not found
non-executable trial program | echo x > notexec && sed -i 's#"[^"]*toy_trial"#"./notexec"#' c.yaml | run c.yaml | 2 | not an executable file
zero trials | sed -i 's/n_trials: 4/n_trials: 0/' c.yaml | run c.yaml | 2 | study.n_trials
unknown sampler | sed -i 's/kind: random/kind: bayes/' c.yaml | run c.yaml | 2 | unknown sampler 'bayes'
sampler option out of range | sed -i 's/kind: random, seed: 1/kind: tpe, gamma: 2/' c.yaml | run c.yaml | 2 | sampler.gamma
grid over the stated limit | sed -i 's/kind: random, seed: 1/kind: grid/; s/log: true/log: true, grid_points: 1000/; s/low: 1, high: 8/low: 1, high: 1000/; s/high: 0.9,/high: 0.9, grid_points: 1000,/' c.yaml | run c.yaml | 2 | the grid has more than 1000000
unknown pruner | echo 'pruner: {kind: sometimes}' >> c.yaml | run c.yaml | 2 | unknown pruner 'sometimes'
unknown retry state | sed -i 's/timeout: 30s/timeout: 30s, retries: 2, retry_on: [crash, tuesday]/' c.yaml | run c.yaml | 2 | trial.retry_on\[1\]: unknown failure 'tuesday'
unparsable memory limit | sed -i 's/timeout: 30s/timeout: 30s, memory_limit: lots/' c.yaml | run c.yaml | 2 | trial.memory_limit: 'lots' is not a memory size
memory limit too small | sed -i 's/timeout: 30s/timeout: 30s, memory_limit: 1K/' c.yaml | run c.yaml | 2 | trial.memory_limit: must be at least 16M
enqueued value out of range | printf 'enqueue:\n  - {lr: 5.0}\n' >> c.yaml | run c.yaml | 2 | enqueue\[0\].lr
--set of an unknown key | : | run c.yaml --set study.colour=blue | 2 | --set study.colour
--set with a malformed value | : | run c.yaml --set 'study.n_trials=[1' | 2 | --set study.n_trials
missing config file | rm c.yaml | run c.yaml | 2 | cannot open the config file
config is a folder | rm c.yaml && mkdir c.yaml | run c.yaml | 2 | c.yaml
unwritable results folder | echo file > blocker && sed -i 's#results/h.h5#blocker/h.h5#' c.yaml | run c.yaml | 2 | blocker.*cannot hold the study file
study file exists already | cp $study_dir/results/h.h5 results/h.h5 | run c.yaml | 2 | already exists; continue it with --resume
resume: not an HDF5 file | echo 'not hdf5' > results/h.h5 | resume results/h.h5 | 2 | not an HDF5 file
resume: truncated study file | head -c 3000 $study_dir/results/h.h5 > results/h.h5 | resume results/h.h5 | 2 | results/h.h5: the study file is damaged: cannot open the study file
resume: another schema version | cp $study_dir/results/h.h5 results/h.h5 && /usr/bin/python3 -c "import h5py; h5py.File('results/h.h5', 'r+').attrs['schema_version'] = 99" | resume results/h.h5 | 2 | written with schema 99
resume: HDF5 but not a study | /usr/bin/python3 -c "import h5py; h5py.File('results/h.h5', 'w')" | resume results/h.h5 | 2 | not a cleansweep study file
resume: no such file | : | resume results/none.h5 | 2 | no such study file
resume: changed search space | cp $study_dir/results/h.h5 results/h.h5 && sed -i 's/low: 1, high: 8/low: 1, high: 16/' c.yaml | run c.yaml --resume | 2 | param n: was int \[1, 8\], now int \[1, 16\]
resume: added parameter even with --force | cp $study_dir/results/h.h5 results/h.h5 && echo '  k: {type: int, low: 1, high: 3}' >> c.yaml | run c.yaml --resume --force | 2 | param k: added
resume: a longer choice even with --force | cp $study_dir/results/h.h5 results/h.h5 && sed -i 's/choices: \[sgd, adam\]/choices: [sgd, adam, adamw_amsgrad]/' c.yaml | run c.yaml --resume --force | 2 | change the study file's columns
resume: changed objective | cp $study_dir/results/h.h5 results/h.h5 | run c.yaml --resume --set study.direction=minimize | 2 | study.direction: was maximize, now minimize
resume: study in use | cp $study_dir/results/h.h5 results/h.h5 && : > results/h.h5.lock && (flock $PWD/results/h.h5.lock sleep 30 &) && sleep 0.3 | run c.yaml --resume | 2 | the study is in use
show: not a study | echo hi > x.h5 | show x.h5 | 2 | not an HDF5 file
show: a folder | : | show results | 2 | results: a folder, not a study file
issue 15: duplicate parameter | echo '  n: {type: int, low: 1, high: 3}' >> c.yaml | run c.yaml | 2 | c.yaml:9:3: space.n: appears twice in one mapping (lines 6 and 9)
issue 15: duplicate section | echo 'study: {name: other}' >> c.yaml | run c.yaml | 2 | study: appears twice in one mapping (lines 1 and 9)
issue 15: zero timeout | sed -i 's/timeout: 30s/timeout: 0s/' c.yaml | run c.yaml | 2 | trial.timeout: must be longer than 0s
issue 15: overflowing timeout | sed -i 's/timeout: 30s/timeout: 99999999999999999h/' c.yaml | run c.yaml | 2 | trial.timeout: '99999999999999999h' is longer than 3650d
issue 15: step that does not divide | sed -i 's/high: 0.9,/high: 1.0, step: 0.3,/' c.yaml | run c.yaml | 2 | space.m.step: step 0.3 does not divide \[0.0, 1.0\]
issue 15: NUL in a choice | sed -i 's/choices: \[sgd, adam\]/choices: [sgd, "a\\0b"]/' c.yaml | run c.yaml | 2 | space.opt.choices\[1\]: text contains a NUL byte
issue 15: export over its study | cp $study_dir/results/h.h5 results/h.h5 | export results/h.h5 -o results/h.h5 | 2 | the export would overwrite its input
issue 15: export over the lock | cp $study_dir/results/h.h5 results/h.h5 | export results/h.h5 -o results/h.h5.lock | 2 | would overwrite the lock file
issue 15: export through a link to the study | cp $study_dir/results/h.h5 results/h.h5 && ln -s results/h.h5 link.h5 | export results/h.h5 -o link.h5 --format json | 2 | the export would overwrite its input
issue 15: export into a folder | cp $study_dir/results/h.h5 results/h.h5 | export results/h.h5 -o results | 2 | results: is a folder
issue 15: report over its study | cp $study_dir/results/h.h5 results/h.h5 | report results/h.h5 -o results/h.h5 | 2 | the report would overwrite its input
issue 15: report of a study named .html | cp $study_dir/results/h.h5 study.html | report study.html | 2 | study.html: the report would overwrite its input
issue 15: merge over a shard | cp $study_dir/results/h.h5 results/h.h5 | merge results/h.h5 results/h.h5 | 2 | the merged study would overwrite its input
issue 15: resume a damaged study | $py -c "d = bytearray(open('$study_dir/results/h.h5', 'rb').read()); d[2048:] = bytes(b ^ 255 for b in d[2048:]); open('results/h.h5', 'wb').write(d)" | resume results/h.h5 | 2 | results/h.h5: the study file is damaged
TABLE
)

snapshot() { (cd "$1" && find . -path ./out -prune -o -printf '%p %s %T@ %m\n' | sort); }

passed=0 failed=0
while IFS='|' read -r name setup command status pattern; do
  name=$(echo "$name" | xargs -0)
  name=${name%$'\n'}
  [ -n "${name// /}" ] || continue
  dir=$work/case$((passed + failed))
  mkdir -p "$dir/out" && cd "$dir" && good_config
  (eval "$setup") > /dev/null 2>&1 || { echo "FAIL [$name]: set-up failed"; failed=$((failed + 1)); continue; }
  before=$(snapshot "$dir")
  eval "words=(${command})"
  if [ "${words[0]}" = run ] || [ "${words[0]}" = resume ]; then
    "${mpi[@]}" -np 2 "$bin/cleansweep" "${words[@]}" < /dev/null > out/stdout 2> out/stderr  # mpirun reads stdin
  else
    "$bin/cleansweep" "${words[@]}" < /dev/null > out/stdout 2> out/stderr
  fi
  code=$?
  pkill -f "flock $dir/results/h.h5.lock" 2> /dev/null  # this case's holder only, not another run's
  after=$(snapshot "$dir")
  pattern=$(echo "$pattern" | sed 's/^ *//; s/ *$//')
  status=${status// /}
  errors=$(grep -c "cleansweep: error:" out/stderr)
  problem=""
  [ "$code" = "$status" ] || problem="exit status $code, expected $status"
  [ -z "$problem" ] && [ "$errors" != 1 ] && problem="$errors 'cleansweep: error:' lines, expected 1"
  [ -z "$problem" ] && ! grep -q -- "$pattern" out/stderr && problem="no '$pattern' in the message"
  [ -z "$problem" ] && [ "$before" != "$after" ] && problem="files changed: $(diff <(echo "$before") <(echo "$after") | head -5)"
  if [ -n "$problem" ]; then
    echo "FAIL [$name]: $problem"
    sed 's/^/    /' out/stderr | head -8
    failed=$((failed + 1))
  else
    echo "ok   [$name] $(grep -m1 "cleansweep: error:" out/stderr | cut -c1-150)"
    passed=$((passed + 1))
  fi
done <<< "$cases"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -ge 30 ] || exit 1
echo "PASS: hostile input"
