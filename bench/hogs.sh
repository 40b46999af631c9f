# Sourced by the bench scripts: start_hogs N starts N CPU-bound processes (the real python3, not
# a pyenv shim, so that the pid is the busy process) and registers a trap that kills them and
# removes $work on exit.
hog_pids=()
cleanup() {
  if [ ${#hog_pids[@]} -gt 0 ]; then kill "${hog_pids[@]}" 2> /dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
start_hogs() {
  local _
  for _ in $(seq 1 "$1"); do
    /usr/bin/python3 -c 'while True: pass' &
    hog_pids+=($!)
  done
}
