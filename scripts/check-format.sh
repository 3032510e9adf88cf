#!/usr/bin/env bash
# The C++ and CUDA lines changed since the commit in .ci/format-base are laid out as
# .clang-format says (clang-format-14); the older lines keep theirs, so that no whole-tree
# reformat buries their history. Prints what clang-format would change and fails; to apply it:
#   git clang-format-14 -f --binary clang-format-14 --extensions cpp,hpp,cu,cuh,h \
#     $(grep -v '^#' .ci/format-base)
set -euo pipefail
cd "$(dirname "$0")/.."
base=$(grep -v '^#' .ci/format-base | head -n 1)
if ! git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  echo "format: NOT CHECKED: not a git checkout (the lines changed since $base are git's to say)"
  exit 0
fi
if ! git rev-parse -q --verify "$base^{commit}" > /dev/null; then
  echo "format: the base commit $base (.ci/format-base) is not in this clone: fetch its history"
  exit 1
fi
# git-clang-format-14 exits 0 whether or not it would change something: its diff says.
out=$(GIT_PAGER=cat git clang-format-14 --binary "$(command -v clang-format-14)" \
  --extensions cpp,hpp,cu,cuh,h --diff "$base" 2>&1)
if grep -q '^diff --git' <<< "$out"; then
  echo "$out"
  echo "format: the lines above changed since $base and are not as .clang-format lays them out;"
  echo "to apply: git clang-format-14 -f --binary clang-format-14 --extensions cpp,hpp,cu,cuh,h $base"
  exit 1
fi
echo "format: the lines changed since $base are as .clang-format lays them out"
