# Sourced by the end-to-end scripts: a scratch folder that is cleaned up with whatever still runs
# from it, the mpirun command line for this machine, and fail().
work=$(mktemp -d)
cleanup() {
  [ -n "${KEEP_WORK:-}" ] && { echo "kept $work"; return; }
  pkill -KILL -f "$work/" 2> /dev/null || true  # whatever a failed check left running
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
mpi=(mpirun --oversubscribe)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
export OMPI_MCA_btl_vader_single_copy_mechanism=none  # containers often forbid the CMA ptrace path
py=/usr/bin/python3
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
# job_pids CONFIG: mpirun and the cleansweep ranks of the job this test started on $work/CONFIG.
job_pids() {
  local p
  for p in $(pgrep -f "$work/$1"); do
    case "$(ps -o comm= -p "$p" 2> /dev/null)" in mpirun | cleansweep) echo "$p" ;; esac
  done
}
# kill_job JOB_PID CONFIG TRIAL_PATTERN: SIGKILL to the whole job on $work/CONFIG at once (mpirun and
# every rank, as a node failure or `scancel -s KILL` would), then waits up to 5 s until neither the
# job nor a trial process matching "TRIAL_PATTERN $work" is left.
kill_job() {
  # shellcheck disable=SC2046
  kill -KILL $(job_pids "$2") 2> /dev/null || true
  wait "$1" 2> /dev/null || true
  for _ in $(seq 1 100); do
    [ -z "$(job_pids "$2")" ] && ! pgrep -f "$3 $work" > /dev/null && return 0
    sleep 0.05
  done
}
# ended LOG: what a run that failed said, for fail(): its error lines first (mpirun's epilogue,
# which follows them, would push them out of a plain tail), then its last lines.
ended() {
  grep -m 5 -E "error|warning" "$1" || true
  echo "... last lines:"
  tail -8 "$1"
}
