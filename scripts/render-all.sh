#!/usr/bin/env bash
# Regenerates every committed figure from the committed CSV files alone (no GPU):
# `gpuprobe report` on every run under results/<gpu-slug>/<run-id>/, then `gpuprobe compare`
# again for every results/compare/<name>/, with the runs its parameters.csv names
# (`# run_N=` lines, relative to the repository root), with their paper tables (table.md,
# .tex, .csv) and a run's exports (RUN/exports/) where those are committed.
# Usage: scripts/render-all.sh [path/to/gpuprobe]    (default: build/gpuprobe)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-$root/build/gpuprobe}"
case "$bin" in /*) ;; *) bin="$PWD/$bin" ;; esac
if [ ! -x "$bin" ]; then
  echo "render-all: '$bin' is not an executable gpuprobe (build it, or pass its path)" >&2
  exit 2
fi
cd "$root"
status=0 count=0
for params in results/*/*/parameters.csv; do
  [ -e "$params" ] || continue
  dir="$(dirname "$params")"
  case "$dir" in results/reference/* | results/compare/*) continue ;; esac
  "$bin" report "$dir" || status=1
  # A run whose exports are committed gets them written again.
  if [ -d "$dir/exports" ]; then
    "$bin" export "$dir" --json --out "$dir/exports/gpuprobe-run.json" || status=1
    "$bin" export "$dir" --accel-sim --out "$dir/exports/gpgpusim.config" || status=1
    "$bin" export "$dir" --mt4g --out "$dir/exports/mt4g.json" || status=1
  fi
  count=$((count + 1))
done
for table in results/compare/*/parameters.csv; do
  [ -e "$table" ] || continue
  out="$(dirname "$table")"
  mapfile -t runs < <(sed -n 's/^# run_[0-9][0-9]*=//p' "$table")
  if [ "${#runs[@]}" -lt 2 ]; then
    echo "render-all: $table names fewer than two runs (# run_N= lines): skipped" >&2
    status=1
    continue
  fi
  "$bin" compare "${runs[@]}" --out "$out" || status=1
  # The paper tables of the same runs, where they are committed.
  for fmt in md:markdown tex:latex csv:csv; do
    if [ -e "$out/table.${fmt%%:*}" ]; then
      "$bin" compare --table "${fmt#*:}" "${runs[@]}" > "$out/table.${fmt%%:*}.tmp" &&
        mv "$out/table.${fmt%%:*}.tmp" "$out/table.${fmt%%:*}" || status=1
    fi
  done
  count=$((count + 1))
done
echo "render-all: $count report(s) and comparison(s) rendered$([ $status -ne 0 ] && echo ', with errors (see above)')"
exit $status
