#!/bin/bash
# The whole test suite: installs what is missing, builds (warnings are errors under CI), runs every
# test with ctest. Set CLEANSWEEP_SANITIZE=address,undefined to also run the unit tests under the
# sanitizers in build-sanitize/ (CI does; the end-to-end tests, label e2e, run in the normal build),
# the fuzz targets among them for CLEANSWEEP_FUZZ_SECONDS each (default 30 there, 5 in build/).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
werror=OFF
[ -n "${CI:-}" ] && werror=ON
scripts/build.sh -DCLEANSWEEP_WERROR=$werror
ctest --test-dir build --output-on-failure --parallel 2 --timeout 600

sanitize=${CLEANSWEEP_SANITIZE:-}
[ -n "${CI:-}" ] && sanitize=${CLEANSWEEP_SANITIZE:-address,undefined}
if [ -n "$sanitize" ]; then
  echo "== unit tests under -fsanitize=$sanitize"
  generator=()
  command -v ninja > /dev/null && generator=(-G Ninja)
  cmake -S . -B build-sanitize "${generator[@]}" -DCMAKE_BUILD_TYPE=Debug -DCLEANSWEEP_BUILD_TRAINER=OFF \
    -DCLEANSWEEP_SANITIZE="$sanitize" -DCLEANSWEEP_WERROR=$werror \
    -DCLEANSWEEP_FUZZ_SECONDS="${CLEANSWEEP_FUZZ_SECONDS:-30}" > /dev/null
  cmake --build build-sanitize --parallel "$(nproc)"
  # handle_segv=0: the crash tests' trial must die of its SIGSEGV, not be caught by ASan.
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1:handle_segv=0 \
    ctest --test-dir build-sanitize --output-on-failure --parallel 2 --timeout 600 --label-exclude e2e
fi
