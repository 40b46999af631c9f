#!/bin/bash
# cleansweep's Slurm scripts against a real Slurm: a one-node cluster on this machine, with four
# (fake) GPUs in its GRES, started and stopped by this test.
#   slurm_test.sh BIN_DIR SOURCE_DIR
# It installs Debian's slurm-wlm and munge when missing, starts munged, slurmctld and slurmd with
# a private config, state folder, socket and ports, and checks:
#   sweep    scripts/slurm/sweep.sbatch: 1 coordinator + 2 workers on 2 GPUs; every trial in the
#            study file; each worker on its own GPU, from Slurm's CUDA_VISIBLE_DEVICES
#   gangs    trial.gpus: 4 through sweep.sbatch on the node's 4 GPUs (one trial, every GPU); and
#            scripts/slurm/sweep-cpu.sbatch, with no GPU request, running trials of 2 CPU workers
#   array    scripts/slurm/submit-array.sh: 3 one-GPU shards (1 coordinator + 1 worker each, on a
#            job with one task) and the merge job that waits for them; merged = union of the
#            shards = the same sweep run unsharded
#   requeue  a running sweep requeued by scontrol requeue, then told its time is up (SIGUSR1 to
#            the batch script, as --signal=B:USR1 does): it requeues itself, resumes twice and
#            ends with every trial once, none lost, none twice
# Exit 77 (reported as skipped by ctest) when it cannot run here: not root.
set -euo pipefail
bin=$1 src=$2
[ "$(id -u)" = 0 ] || { echo "SKIPPED: a private Slurm needs root (slurmd starts jobs as their users)"; exit 77; }

if ! command -v slurmctld > /dev/null || ! command -v slurmd > /dev/null || ! command -v munged > /dev/null; then
  echo "installing slurm-wlm and munge (Debian packages)"
  export DEBIAN_FRONTEND=noninteractive
  apt_log=$(mktemp)
  apt-get install -y -o DPkg::Lock::Timeout=600 --no-install-recommends slurm-wlm munge > "$apt_log" 2>&1 ||
    { apt-get update > /dev/null 2>&1 && apt-get install -y -o DPkg::Lock::Timeout=600 --no-install-recommends slurm-wlm munge > "$apt_log" 2>&1; } ||
    { cat "$apt_log" >&2; echo "FAIL: cannot install slurm-wlm and munge" >&2; exit 1; }
  rm -f "$apt_log"
fi

work=$(mktemp -d /tmp/cleansweep-slurm.XXXXXX)
chmod 755 "$work"
export SLURM_CONF=$work/etc/slurm.conf
fail() {
  echo "FAIL: $*" >&2
  for f in "$work"/run/slurm-*.out "$work"/log/*.log; do
    [ -f "$f" ] && { echo "--- $f" >&2; tail -30 "$f" >&2; }
  done
  exit 1
}
cleanup() {
  set +e
  if [ -f "$work/slurmctld.pid" ]; then
    scancel --full "--user=$(id -un)" 2> /dev/null
    scontrol shutdown > /dev/null 2>&1
  fi
  for pidfile in "$work/slurmd.pid" "$work/slurmctld.pid"; do
    [ -f "$pidfile" ] || continue
    pid=$(cat "$pidfile")
    for _ in $(seq 50); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2> /dev/null
  done
  [ -S "$work/munge/socket" ] && munged --stop "--socket=$work/munge/socket" > /dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT

# --- a one-node cluster -----------------------------------------------------------------------
node=$(hostname -s)
free_port() {  # a port nothing listens on, and the next one
  local p
  for _ in $(seq 50); do
    p=$((20000 + RANDOM % 30000))
    (exec 3<> "/dev/tcp/127.0.0.1/$p") 2> /dev/null || (exec 3<> "/dev/tcp/127.0.0.1/$((p + 1))") 2> /dev/null ||
      { echo "$p"; return; }
  done
  fail "no free port"
}
port=$(free_port)
mkdir -p "$work"/{etc,state,spool,log,munge,dev,run}
chmod 711 "$work/munge"
dd if=/dev/urandom of="$work/munge/key" bs=1024 count=1 status=none
chmod 400 "$work/munge/key"
# Character devices like the real ones; where mknod is not allowed, plain files: Slurm then sets
# CUDA_VISIBLE_DEVICES=NoDevFiles and the workers bind through SLURM_GPUS_ON_NODE instead.
gpu_source="CUDA_VISIBLE_DEVICES=0,1"
for i in 0 1 2 3; do
  mknod "$work/dev/nvidia$i" c 195 "$i" 2> /dev/null || { touch "$work/dev/nvidia$i"; gpu_source="SLURM_GPUS_ON_NODE=2"; }
done
munged --force "--socket=$work/munge/socket" "--key-file=$work/munge/key" "--log-file=$work/log/munged.log" \
  "--pid-file=$work/munge/pid" "--seed-file=$work/munge/seed" || fail "munged did not start"
cat > "$SLURM_CONF" << CONF
ClusterName=cstest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
AuthType=auth/munge
# cred_expire also sets how long a requeued job waits before it may start again (default 120 s)
AuthInfo=socket=$work/munge/socket,cred_expire=5
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
GresTypes=gpu
KillWait=30
MinJobAge=600
NodeName=$node NodeAddr=127.0.0.1 CPUs=8 Gres=gpu:4 RealMemory=4000 State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
echo "NodeName=$node Name=gpu File=$work/dev/nvidia[0-3]" > "$work/etc/gres.conf"
slurmctld -f "$SLURM_CONF" || fail "slurmctld did not start"
slurmd -f "$SLURM_CONF" -N "$node" || fail "slurmd did not start"
for _ in $(seq 100); do
  [ "$(sinfo -h -o %T 2> /dev/null)" = idle ] && break
  sleep 0.2
done
[ "$(sinfo -h -o %T)" = idle ] || fail "the node did not become idle: $(sinfo 2>&1)"
echo "slurm up: node $node, 8 CPUs, 4 GPUs, port $port"

# --- helpers ------------------------------------------------------------------------------------
export CLEANSWEEP_HOME=$src CLEANSWEEP_BIN=$bin
export OMPI_MCA_btl_vader_single_copy_mechanism=none
cd "$work/run"
job_field() { scontrol show job -o "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
wait_job() {  # wait_job ID SECONDS: until the job has ended; prints its final state
  local state=""
  for _ in $(seq $(($2 * 5))); do
    state=$(job_field "$1" JobState)
    case $state in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) echo "$state"; return ;; esac
    sleep 0.2
  done
  fail "job $1 still $state after $2 s"
}
finished_trials() {  # finished_trials STUDY: trials that ended (any state but RUNNING)
  /usr/bin/python3 - "$1" << 'PY' 2> /dev/null || echo 0
import sys, h5py
with h5py.File(sys.argv[1], "r", swmr=True) as f:
    print(sum(1 for s in f["trials"]["state"] if s.decode().rstrip("\0") != "RUNNING"))
PY
}
toy_config() {  # toy_config FILE STORAGE N_TRIALS SLEEP
  cat > "$1" << YAML
study: {name: slurm, direction: maximize, n_trials: $3, storage: $2}
sampler: {kind: random, seed: 21}
trial: {command: ["$bin/toy_trial"], timeout: 60s, stop_grace: 3s, kill_grace: 1s}
space:
  x: {type: float, low: 0.0, high: 1.0}
  n: {type: int, low: 1, high: 8}
  mode: ok
  sleep: $4
YAML
}
small_job=(--ntasks-per-node=2 --gpus-per-node=2 --cpus-per-task=1 --time=10)

# --- sweep: 1 coordinator + 2 workers on 2 GPUs --------------------------------------------------
toy_config sweep.yaml "$work/run/sweep.h5" 24 0.05
id=$(sbatch --parsable "${small_job[@]}" "$src/scripts/slurm/sweep.sbatch" sweep.yaml)
[ "$(wait_job "$id" 120)" = COMPLETED ] || fail "sweep job $id: $(job_field "$id" JobState) $(job_field "$id" ExitCode)"
log=slurm-cleansweep-$id.out
grep -q "cleansweep-slurm: job $id: 1 node(s), 2 workers + 1 coordinator" "$log" || fail "no layout line in $log"
grep -qE "GPUs on $node \($gpu_source\): rank [12] -> [01], rank [12] -> [01]" "$log" ||
  fail "no binding line from $gpu_source in $log"
/usr/bin/python3 - "$work/run/sweep.h5" << 'PY' || fail "sweep study"
import sys, h5py
with h5py.File(sys.argv[1], "r", swmr=True) as f:
    t = f["trials"][:]
states = [s.decode().rstrip("\0") for s in t["state"]]
assert len(t) == 24 and states.count("COMPLETE") == 24, states
assert sorted(t["number"]) == list(range(24))
gpus = {(int(w), g.decode().rstrip("\0")) for w, g in zip(t["worker"], t["gpu"])}
assert gpus == {(1, "0"), (2, "1")}, f"each worker on its own GPU: {gpus}"
PY
echo "ok: sweep.sbatch ran 24 trials, rank 1 on GPU 0 and rank 2 on GPU 1 (from $gpu_source)"

# --- gangs: trials of 4 GPUs on the node's 4, and of 2 CPU workers on a job without GPUs ---------
toy_config gang.yaml "$work/run/gang.h5" 4 0.05
sed -i 's/^trial: {/trial: {gpus: 4, /' gang.yaml
id=$(sbatch --parsable --ntasks-per-node=4 --gpus-per-node=4 --cpus-per-task=1 --time=10 "$src/scripts/slurm/sweep.sbatch" gang.yaml)
[ "$(wait_job "$id" 120)" = COMPLETED ] || fail "gang job $id: $(job_field "$id" JobState) $(cat "slurm-cleansweep-$id.out")"
toy_config cpu.yaml "$work/run/cpu.h5" 6 0.05
sed -i 's/^trial: {/trial: {gpus: 2, /' cpu.yaml
id=$(sbatch --parsable --ntasks-per-node=4 --cpus-per-task=1 --time=10 "$src/scripts/slurm/sweep-cpu.sbatch" cpu.yaml)
[ "$(wait_job "$id" 120)" = COMPLETED ] || fail "CPU job $id: $(job_field "$id" JobState) $(cat "slurm-cleansweep-$id.out")"
grep -q "cleansweep-slurm: job $id: 1 node(s), 4 workers + 1 coordinator" "slurm-cleansweep-$id.out" ||
  fail "the CPU job's layout: $(cat "slurm-cleansweep-$id.out")"
/usr/bin/python3 - "$work/run/gang.h5" "$work/run/cpu.h5" << 'PY' || fail "gang studies"
import sys, h5py
def rows(path):
    with h5py.File(path, "r", swmr=True) as f:
        return f["trials"][:]
text = lambda b: b.decode().rstrip("\0")
gang, cpu = rows(sys.argv[1]), rows(sys.argv[2])
assert [text(s) for s in gang["state"]] == ["COMPLETE"] * 4, gang["reason"]
assert all(int(g) == 4 and text(w) == "1-4" and text(d) == "0,1,2,3" for g, w, d in zip(gang["gpus"], gang["workers"], gang["gpu"])), gang[["gpus", "workers", "gpu"]]
assert [text(s) for s in cpu["state"]] == ["COMPLETE"] * 6, cpu["reason"]
assert all(int(g) == 2 and text(d) == "" for g, d in zip(cpu["gpus"], cpu["gpu"])), cpu[["gpus", "gpu"]]
PY
echo "ok: 4-GPU trials on Slurm's 4 GPUs; sweep-cpu.sbatch ran 2-worker trials on CPU workers"

# --- array: 3 shards on one GPU each, then the merge job -----------------------------------------
# The sweep's own config, its storage moved by an option that the shards and the merge both get.
out=$("$src/scripts/slurm/submit-array.sh" sweep.yaml 3 --gpus-per-node=1 --ntasks-per-node=1 --cpus-per-task=1 \
  --time=10 -- --set "study.storage=$work/run/array.h5") || fail "submit-array.sh: $out"
array=$(sed -n 's/^array job \([0-9]*\):.*/\1/p' <<< "$out")
merge=$(sed -n 's/^merge job \([0-9]*\):.*/\1/p' <<< "$out")
[ -n "$array" ] && [ -n "$merge" ] || fail "submit-array.sh printed: $out"
[ "$(wait_job "$merge" 180)" = COMPLETED ] || fail "merge job $merge: $(job_field "$merge" JobState)"
for k in 0 1 2; do
  [ "$(job_field "${array}_$k" JobState)" = COMPLETED ] || fail "array task $k: $(job_field "${array}_$k" JobState)"
  grep -q "1 workers + 1 coordinator" "slurm-cleansweep-${array}_$k.out" || fail "array task $k layout"
  grep -q "(shard $k/3 of a sweep of 24)" "slurm-cleansweep-${array}_$k.out" || fail "array task $k shard"
done
grep -q "merged 3 of 3 shards into $work/run/array.h5: 24 trials (24 COMPLETE)" "slurm-cleansweep-merge-$merge.out" ||
  fail "merge output: $(cat "slurm-cleansweep-merge-$merge.out")"
/usr/bin/python3 - "$work/run" << 'PY' || fail "merged study"
import sys, collections, h5py
d = sys.argv[1]
def trials(name):
    with h5py.File(f"{d}/{name}", "r", swmr=True) as f:
        t = f["trials"][:]
    return collections.Counter((round(float(x), 9), int(n), s.decode().rstrip("\0"), float(v))
                               for x, n, s, v in zip(t["param_x"], t["param_n"], t["state"], t["value"]))
merged = trials("array.h5")
shards = sum((trials(f"array-shard-{k}-of-3.h5") for k in range(3)), collections.Counter())
assert merged == shards, "merged != union of the shards"
assert sum(merged.values()) == 24 and max(merged.values()) == 1
whole = trials("sweep.h5")  # the same sampler, seed and space, run unsharded
assert merged == whole, "the shards did not run the unsharded sweep's trials"
PY
echo "ok: 3 shards of 24 trials on one-task jobs, merged by the dependent job = union of shards = unsharded sweep"

# --- requeue: scontrol requeue, then SIGUSR1 to the batch script ----------------------------------
toy_config requeue.yaml "$work/run/requeue.h5" 30 0.6
id=$(sbatch --parsable "${small_job[@]}" "$src/scripts/slurm/sweep.sbatch" requeue.yaml)
wait_finished() {  # wait_finished N: until the study has N finished trials more than now
  local want=$(($(finished_trials requeue.h5) + $1))
  for _ in $(seq 300); do
    [ "$(finished_trials requeue.h5)" -ge "$want" ] && return
    sleep 0.2
  done
  fail "requeue sweep: fewer than $want trials finished after 60 s"
}
wait_finished 6
scontrol requeue "$id" || fail "scontrol requeue $id"
for _ in $(seq 300); do
  [ "$(job_field "$id" Restarts)" = 1 ] && [ "$(job_field "$id" JobState)" = RUNNING ] && break
  sleep 0.2
done
[ "$(job_field "$id" JobState)" = RUNNING ] || fail "job $id did not start again after the requeue"
wait_finished 6
scancel --batch --signal=USR1 "$id"  # what --signal=B:USR1@120 does before the time limit
[ "$(wait_job "$id" 180)" = COMPLETED ] || fail "requeued job $id: $(job_field "$id" JobState)"
[ "$(job_field "$id" Restarts)" = 2 ] || fail "job $id restarted $(job_field "$id" Restarts) times, expected 2"
log=slurm-cleansweep-$id.out
grep -q "restart 1 of job $id: resuming the study" "$log" || fail "no resume after scontrol requeue"
grep -q "cleansweep-slurm: requeueing job $id; its next start resumes the study" "$log" || fail "no self-requeue"
grep -q "restart 2 of job $id: resuming the study" "$log" || fail "no resume after the self-requeue"
/usr/bin/python3 - "$work/run/requeue.h5" << 'PY' || fail "requeued study"
import sys, collections, h5py
with h5py.File(sys.argv[1], "r", swmr=True) as f:
    t = f["trials"][:]
states = [s.decode().rstrip("\0") for s in t["state"]]
numbers = list(t["number"])
assert len(set(numbers)) == len(numbers), "a trial number twice"
assert "RUNNING" not in states and "CRASH" not in states and "FAIL" not in states, collections.Counter(states)
retried = {int(r) for r in t["retry_of"] if r >= 0}
interrupted = {int(n) for n, s in zip(numbers, states) if s == "INTERRUPTED"}
assert interrupted == retried, f"every interrupted trial ran again: {interrupted} vs {retried}"
assert states.count("COMPLETE") == 30, collections.Counter(states)
# none twice: the 30 completed trials are 30 distinct configurations
done = {(round(float(x), 9), int(n)) for x, n, s in zip(t["param_x"], t["param_n"], states) if s == "COMPLETE"}
assert len(done) == 30
reasons = collections.Counter((r.decode() if isinstance(r, bytes) else r) for r, s in zip(t["reason"], states) if s == "INTERRUPTED")
print(f"requeue: {len(t)} rows, 30 COMPLETE, {len(interrupted)} INTERRUPTED and run again: {dict(reasons)}")
PY
echo "ok: requeued twice (scontrol requeue; SIGUSR1 and self-requeue), resumed, 30 trials, none lost or twice"
