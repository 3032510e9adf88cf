#!/usr/bin/env bash
# Repeatability on record: `gpuprobe run` N times into one folder, then the spread of every
# parameter over the runs against its own interval (`gpuprobe spread`), written beside them.
#   scripts/repeat.sh N [--out DIR] [gpuprobe run options...]
# DIR (default results/repeat-<UTC time>) gets one DIR/<gpu-slug>/<run-id>/ per run and
# DIR/spread.csv. A run that fails is reported and the others go on; the spread needs two
# runs that wrote parameters.csv. GPUPROBE: the binary (default build/gpuprobe).
set -uo pipefail
usage="usage: scripts/repeat.sh N [--out DIR] [gpuprobe run options...]"
n=${1:-}
if ! [[ "$n" =~ ^[0-9]+$ ]] || [ "$n" -lt 2 ]; then echo "repeat.sh: N must be a whole number >= 2; $usage" >&2; exit 2; fi
shift
bin=${GPUPROBE:-build/gpuprobe}
[ -x "$bin" ] || { echo "repeat.sh: $bin: no gpuprobe binary (build it, or set GPUPROBE)" >&2; exit 2; }
out="results/repeat-$(date -u +%Y%m%dT%H%M%SZ)"
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) [ $# -ge 2 ] || { echo "repeat.sh: --out: missing value" >&2; exit 2; }; out=$2; shift 2 ;;
    --out=*) out=${1#--out=}; shift ;;
    *) args+=("$1"); shift ;;
  esac
done
mkdir -p "$out" || exit 1
failed=0
for i in $(seq 1 "$n"); do
  echo "repeat.sh: run $i of $n into $out" >&2
  "$bin" run --out "$out" "${args[@]}" || { echo "repeat.sh: run $i failed (exit $?)" >&2; failed=$((failed + 1)); }
done
runs=()
while IFS= read -r f; do runs+=("$(dirname "$f")"); done < <(find "$out" -mindepth 3 -maxdepth 3 -name parameters.csv | sort)
if [ "${#runs[@]}" -lt 2 ]; then echo "repeat.sh: fewer than two runs wrote parameters.csv under $out" >&2; exit 1; fi
"$bin" spread "${runs[@]}" --out "$out/spread.csv" || exit 1
[ "$failed" -eq 0 ] || { echo "repeat.sh: $failed of $n runs failed" >&2; exit 1; }
