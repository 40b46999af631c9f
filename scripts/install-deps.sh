#!/bin/bash
# Installs the Debian packages cleansweep needs to build, test and run its quickstart.
# Idempotent and quiet when everything is present. Needs root (or sudo) only when something is missing.
set -euo pipefail

packages=(
  g++ cmake ninja-build make pkg-config            # toolchain
  libopenmpi-dev openmpi-bin                       # MPI (coordinator and workers)
  libhdf5-dev                                      # the study file
  libcereal-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev zlib1g-dev libeigen3-dev
  libgtest-dev                                     # the test suite
  libtorch-dev dataset-fashion-mnist               # the bundled trainer and its data
  python3 python3-h5py python3-pandas python3-numpy  # reading studies; Python trial example; tests
  procps                                           # ps/pgrep for the tests
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
sudo=()
[ "$(id -u)" = 0 ] || sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" > /dev/null
echo "install-deps: done"
