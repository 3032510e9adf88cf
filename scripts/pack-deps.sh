#!/usr/bin/env bash
# Packs the header-only libraries the build finds with find_package (CLI11, nlohmann-json) from
# this machine's Debian packages into one folder, laid out as an install prefix, for a machine
# that has neither them nor a network (the GPU machine of the device tool):
#   scripts/pack-deps.sh [DIR]      (default: .deps, which git ignores)
# then carry DIR with the tree and configure with -DCMAKE_PREFIX_PATH=DIR (device-run.sh does,
# given DEPS=DIR). Their CMake config files locate the headers relative to themselves.
set -euo pipefail
dir=${1:-.deps}
packages="libcli11-dev nlohmann-json3-dev"
mkdir -p "$dir"
for pkg in $packages; do
  if ! dpkg -s "$pkg" > /dev/null 2>&1; then
    echo "pack-deps: $pkg is not installed (apt-get install $packages)" >&2
    exit 1
  fi
  # Headers and CMake package files, at their place under /usr.
  dpkg -L "$pkg" | grep -E '^/usr/(include|share/cmake|lib/cmake)/' | while read -r f; do
    if [ -f "$f" ]; then
      mkdir -p "$dir/$(dirname "${f#/usr/}")"
      cp "$f" "$dir/${f#/usr/}"
    fi
  done
done
echo "pack-deps: $(find "$dir" -type f | wc -l) files in $dir ($(du -sh "$dir" | cut -f1)); configure with -DCMAKE_PREFIX_PATH=$(cd "$dir" && pwd)"
