#!/usr/bin/env bash
# One call on a GPU machine: configure, build, run the code checks and the suite, and pack
# everything into one archive under $OUT (the device tool brings back only a few files).
#   scripts/device-run.sh [--budget SECONDS] [gpuprobe run options...]
# Environment: OUT (default /tmp/gpuprobe-out), ARCH (default native), REPEAT_FILTER (a
# --filter for a second run of the same probes, to check repeatability; empty: none), CTEST
# (0: neither build nor run the test suite, for a short run), QUICK_TOO (1: a --quick run of the
# same build after the full one), INTERRUPT_AFTER (seconds: a further run sent SIGINT after
# that long, kept under logs/, to check that an interrupted run says so), GITDIR (a copy of
# the repository's .git carried along: the device tool sends the working tree with a stale
# .git, and the version a run records must name the commit it was built from), VERSION (instead
# of GITDIR: the `git describe --always --dirty --tags` of the tree that was sent, taken where
# it was sent from, for a repository too large to carry its .git), DEPS (a folder carried along
# that scripts/pack-deps.sh filled with CLI11 and nlohmann-json: the GPU machine has neither
# and no network; given to CMake as its CMAKE_PREFIX_PATH), FULL_RUNS (how many full runs of the
# same build, one after another: repeatability on one machine; default 1), HOOKS (a folder of
# *-device.sh scripts run after the suite, each with OUT set: anchors such as other suites built
# there from sources carried along, which this repository does not hold).
set -uo pipefail
# NVLink multicast stays off on shared hosts (a program that uses it can put every GPU of the
# host out of service): NCCL, PyTorch and NVSHMEM are told so, as the machines' own setup does.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
budget=480
if [ "${1:-}" = "--budget" ]; then budget=$2; shift 2; fi
OUT=${OUT:-/tmp/gpuprobe-out}
ARCH=${ARCH:-native}
export PATH="/usr/local/cuda/bin:$PATH"
mkdir -p "$OUT/results" "$OUT/logs"
if [ -n "${GITDIR:-}" ]; then export GIT_DIR="$PWD/$GITDIR" GIT_WORK_TREE="$PWD"; fi
VERSION=${VERSION:-$(git describe --always --dirty --tags 2>/dev/null || echo unknown)}
echo "version $VERSION"
deps=()
if [ -n "${DEPS:-}" ]; then deps=(-DCMAKE_PREFIX_PATH="$(cd "$DEPS" && pwd)"); fi
start=$(date +%s)
pack() { tar czf "$OUT/gpuprobe-device.tar.gz" -C "$OUT" results logs 2>/dev/null; }
trap pack EXIT
left() { echo $(( budget - ($(date +%s) - start) )); }

{ nvidia-smi -q -d CLOCK,PERFORMANCE,POWER,ECC,TEMPERATURE || true; nvidia-smi topo -m || true
  nvidia-smi nvlink -s || true; } > "$OUT/logs/nvidia-smi.txt" 2>&1
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$ARCH" \
  -DGPUPROBE_VERSION="$VERSION" "${deps[@]}" \
  > "$OUT/logs/configure.log" 2>&1 || { tail -30 "$OUT/logs/configure.log"; exit 1; }
# Without the test suite, only the binary the runs need (the tests' host code is a third of it).
targets=()
if [ "${CTEST:-1}" = 0 ]; then targets=(--target gpuprobe); fi
cmake --build build -j "$(nproc)" "${targets[@]}" > "$OUT/logs/build.log" 2>&1 || { grep -E "error|Error" -m 40 "$OUT/logs/build.log"; exit 1; }
echo "built in $(( $(date +%s) - start )) s"
cuobjdump -sass build/gpuprobe > "$OUT/logs/gpuprobe.sass" 2>&1 || true
if [ "${CTEST:-1}" != 0 ]; then
  (cd build && ctest --output-on-failure -j 8 > "$OUT/logs/ctest.log" 2>&1); echo "ctest exit $?"
  # The verdict, how many skipped (gnuplot, pdflatex, a second GPU: ctest.log names them) and
  # what failed; the tail alone hides the skips behind "100% tests passed".
  grep -E '% tests passed' "$OUT/logs/ctest.log" || true
  echo "skipped: $(grep -c '(Skipped)$' "$OUT/logs/ctest.log")"
  sed -n '/tests FAILED:/,$p' "$OUT/logs/ctest.log"
fi
./build/gpuprobe info 2>&1 | tee "$OUT/logs/info.txt"
for r in $(seq 1 "${FULL_RUNS:-1}"); do
  [ "$(left)" -gt 60 ] || { echo "full run $r: no time left"; break; }
  timeout --signal=INT $(( $(left) - 20 )) ./build/gpuprobe run --out "$OUT/results" "$@" \
    2> "$OUT/logs/run$r.stderr" | tee "$OUT/logs/run$r.stdout"
  echo "run $r exit ${PIPESTATUS[0]}"; tail -15 "$OUT/logs/run$r.stderr"
done
if [ -n "${REPEAT_FILTER:-}" ] && [ "$(left)" -gt 60 ]; then
  timeout --signal=INT $(( $(left) - 15 )) ./build/gpuprobe run --out "$OUT/results" \
    --filter "$REPEAT_FILTER" "$@" > "$OUT/logs/repeat.stdout" 2> "$OUT/logs/repeat.stderr"
  echo "repeat exit $?"
fi
if [ "${QUICK_TOO:-0}" = 1 ] && [ "$(left)" -gt 40 ]; then
  timeout --signal=INT $(( $(left) - 15 )) ./build/gpuprobe run --quick --out "$OUT/results" "$@" \
    > "$OUT/logs/quick.stdout" 2> "$OUT/logs/quick.stderr"
  echo "quick exit $?"; tail -5 "$OUT/logs/quick.stderr"
fi
if [ -n "${INTERRUPT_AFTER:-}" ] && [ "$(left)" -gt $(( INTERRUPT_AFTER + 20 )) ]; then
  timeout --signal=INT "$INTERRUPT_AFTER" ./build/gpuprobe run --out "$OUT/logs/interrupted" "$@" \
    > "$OUT/logs/interrupted.stdout" 2> "$OUT/logs/interrupted.stderr"
  echo "interrupted run exit $?"; tail -5 "$OUT/logs/interrupted.stderr"
  find "$OUT/logs/interrupted" -maxdepth 3 | head -40
fi
if [ -n "${HOOKS:-}" ]; then
  for h in "$HOOKS"/*-device.sh; do
    [ -f "$h" ] || continue
    [ "$(left)" -gt 30 ] || { echo "hook $h: no time left"; continue; }
    name=$(basename "$h" .sh)
    mkdir -p "$OUT/logs/$name"
    OUT="$OUT/logs/$name" timeout $(( $(left) - 10 )) bash "$h" > "$OUT/logs/$name.log" 2>&1
    echo "hook $name exit $?"; tail -5 "$OUT/logs/$name.log"
  done
fi
echo "total $(( $(date +%s) - start )) s"
