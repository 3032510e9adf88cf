#!/usr/bin/env bash
# The collectives with one process per GPU, on one host: the mode a job across nodes runs
# (scripts/slurm/collectives.sbatch), checked here against the one-process mode. Starts N
# processes of `gpuprobe run --ranks-from-env`, rank r on GPU r (GPUPROBE_RANK, GPUPROBE_NRANKS,
# GPUPROBE_LOCAL_RANK), NCCL's unique id handed from rank 0 to the others through a file. Rank 0
# measures, writes the run folder and prints its summary; the others write nothing (their
# stderr is shown at the end). A rank that fails ends the others.
#   scripts/collectives-local.sh N [gpuprobe run options: --out DIR, --quick, --filter ...]
# Environment: GPUPROBE (the binary; default build/gpuprobe).
set -uo pipefail
n=${1:-}
if ! [[ "$n" =~ ^[0-9]+$ ]] || [ "$n" -lt 2 ]; then
  echo "usage: collectives-local.sh N [gpuprobe run options...] (N >= 2)" >&2
  exit 2
fi
shift
gpuprobe=${GPUPROBE:-build/gpuprobe}
[ -x "$gpuprobe" ] || { echo "collectives-local.sh: no gpuprobe binary at $gpuprobe (set GPUPROBE)" >&2; exit 2; }
work=$(mktemp -d /tmp/gpuprobe-ranks.XXXXXX)
job="local-$$-$(date +%s)"  # tells this job's id file from one an earlier job left
pids=()
for ((r = 0; r < n; r++)); do
  if [ "$r" -eq 0 ]; then
    GPUPROBE_RANK=0 GPUPROBE_NRANKS=$n GPUPROBE_LOCAL_RANK=0 GPUPROBE_JOB=$job \
      "$gpuprobe" run --ranks-from-env --nccl-id-file "$work/nccl-id" "$@" &
  else
    GPUPROBE_RANK=$r GPUPROBE_NRANKS=$n GPUPROBE_LOCAL_RANK=$r GPUPROBE_JOB=$job \
      "$gpuprobe" run --ranks-from-env --nccl-id-file "$work/nccl-id" "$@" > "$work/rank$r.log" 2>&1 &
  fi
  pids+=($!)
done
stop_all() { for p in "${pids[@]}"; do [ -n "$p" ] && kill "-${1:-TERM}" "$p" 2> /dev/null; done; }
# A Ctrl-C reaches every rank: rank 0 stops between two steps and tells the others, which wait
# for it (they ignore SIGINT). A second Ctrl-C ends them all at once.
interrupts=0
# shellcheck disable=SC2317  # called by the trap
on_interrupt() {
  interrupts=$((interrupts + 1))
  if [ "$interrupts" -ge 2 ]; then stop_all KILL; exit 130; fi
}
trap on_interrupt INT
trap 'stop_all TERM; exit 143' TERM
status=0
# Until every rank has ended: a rank that fails takes the others down (they would wait for it).
left=$n
while [ "$left" -gt 0 ]; do
  left=0
  for i in "${!pids[@]}"; do
    p=${pids[$i]}
    [ -n "$p" ] || continue
    if kill -0 "$p" 2> /dev/null; then left=$((left + 1)); continue; fi
    wait "$p"; code=$?
    pids[i]=""
    if [ "$code" -ne 0 ] && [ "$status" -eq 0 ]; then
      status=$code
      echo "collectives-local.sh: rank $i exited $code; ending the others" >&2
      stop_all
    fi
  done
  sleep 0.2
done
for ((r = 1; r < n; r++)); do sed "s/^/[rank $r] /" "$work/rank$r.log" >&2; done
rm -rf "$work"
exit $status
