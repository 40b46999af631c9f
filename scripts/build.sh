#!/bin/bash
# Configures build/ (once) and builds. Extra arguments go to cmake's configure step.
# Used by quickstart.sh and test.sh; run it yourself after changing the code.
set -euo pipefail
cd "$(dirname "$0")/.."
generator=()
command -v ninja > /dev/null && generator=(-G Ninja)
if [ ! -f build/CMakeCache.txt ]; then
  cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" > build-configure.log ||
    { cat build-configure.log; exit 1; }
  rm -f build-configure.log
elif [ $# -gt 0 ]; then
  cmake -S . -B build "$@" > /dev/null
fi
cmake --build build --parallel "$(nproc)"
