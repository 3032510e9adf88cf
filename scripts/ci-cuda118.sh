#!/usr/bin/env bash
# CI's second build: CUDA 11.8, the last toolkit for Kepler, from Debian's non-free
# nvidia-cuda-toolkit (host compiler g++-11, its own ptxas first on the PATH). Builds the
# program for sm_35, sm_52, sm_60 and sm_70 and runs the PTX code checks for each of them.
#   scripts/ci-cuda118.sh [BUILD_DIR]   (default build-cuda118; run from the repository root)
set -euo pipefail
build=${1:-build-cuda118}
if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
if [ ! -x /usr/bin/nvcc ] || ! /usr/bin/nvcc --version | grep -q "release 11.8"; then
  if ! apt-cache policy nvidia-cuda-toolkit | grep -q "Candidate: 11.8"; then
    . /etc/os-release
    # apt refuses one source named with two keyrings: take the one debian.sources names, if any.
    keyring=$(sed -n 's/^Signed-By: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
    echo "deb ${keyring:+[signed-by=$keyring] }http://deb.debian.org/debian $VERSION_CODENAME main contrib non-free non-free-firmware" |
      $SUDO tee /etc/apt/sources.list.d/gpuprobe-non-free.list > /dev/null
    $SUDO apt-get update -qq
  fi
  $SUDO apt-get install -y -qq --no-install-recommends nvidia-cuda-toolkit g++-11 > /dev/null
fi
export PATH="/usr/lib/nvidia-cuda-toolkit/bin:/usr/bin:$PATH"

# A machine that also has a newer toolkit's headers in /usr/local/include (searched before
# /usr/include) would mix them with 11.8's own: a folder of links to 11.8's headers, given
# with -I, comes first.
cuda_flags=""
if [ -e /usr/local/include/crt/host_runtime.h ]; then
  inc="$PWD/$build/cuda118-include"
  mkdir -p "$inc"
  for n in $(ls /usr/local/include); do
    if [ -e "/usr/include/$n" ]; then ln -sfn "/usr/include/$n" "$inc/$n"; fi
  done
  cuda_flags="-I$inc"
fi

cmake -S . -B "$build" -G Ninja -DCMAKE_CUDA_COMPILER=/usr/bin/nvcc -DCMAKE_CUDA_HOST_COMPILER=g++-11 \
  -DCMAKE_CUDA_FLAGS="$cuda_flags" -DCMAKE_CUDA_ARCHITECTURES="35;52;60;70" > /dev/null
cmake --build "$build"
ctest --test-dir "$build" -R 'BuildPtx' --output-on-failure
