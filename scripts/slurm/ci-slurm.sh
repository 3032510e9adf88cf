#!/usr/bin/env bash
# CI: the Slurm path on a one-node cluster started from Debian's Slurm packages, with a job
# that needs no GPU: an array job of scripts/slurm/gpuprobe.sbatch re-analyzes the committed
# runs into one results tree, then `gpuprobe compare --fleet` reads that tree and must find the
# one perturbed copy (a slow DRAM) among three unperturbed ones. Needs root (munged,
# slurmctld, slurmd) and a built build/gpuprobe; gives up after GPUPROBE_SLURM_TIMEOUT
# seconds (default 240). Leaves the system's Slurm configuration alone (SLURM_CONF).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
limit=${GPUPROBE_SLURM_TIMEOUT:-240}
start=$(date +%s)
left() { echo $(( limit - ($(date +%s) - start) )); }
[ -x build/gpuprobe ] || { echo "ci-slurm: build/gpuprobe not built" >&2; exit 2; }
if ! command -v sbatch > /dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends slurm-wlm munge > /dev/null
fi

work=$(mktemp -d /tmp/gpuprobe-slurm.XXXXXX)
chmod 755 "$work"  # the munge user reaches its folder inside
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
  wait "${pids[@]}" 2> /dev/null || true
  [ -f "$work/munged.pid" ] && kill "$(cat "$work/munged.pid")" 2> /dev/null || true
}
trap cleanup EXIT
fail() {
  echo "ci-slurm: $*" >&2
  for f in "$work"/*.log; do echo "--- $f" >&2; tail -20 "$f" >&2; done
  exit 1
}

# munge: its own key, socket and logs in the work folder, run as the munge user.
mkdir -p "$work/munge" "$work/munge-key"
cp /etc/munge/munge.key "$work/munge-key/munge.key" 2> /dev/null ||
  dd if=/dev/urandom of="$work/munge-key/munge.key" bs=1 count=128 2> /dev/null
chown -R munge:munge "$work/munge" "$work/munge-key"
chmod 755 "$work/munge" && chmod 700 "$work/munge-key" && chmod 400 "$work/munge-key/munge.key"
runuser -u munge -- munged --key-file="$work/munge-key/munge.key" --socket="$work/munge/socket" \
  --pid-file="$work/munge/munged.pid" --log-file="$work/munge/munged.log" --seed-file="$work/munge/seed" \
  || fail "munged did not start"
cp "$work/munge/munged.pid" "$work/munged.pid"

host=$(hostname -s)
mkdir -p "$work/state" "$work/spool"
cat > "$work/slurm.conf" <<CONF
ClusterName=gpuprobe-ci
SlurmctldHost=$host
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$work/munge/socket
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
SlurmctldPort=16817
SlurmdPort=16818
NodeName=$host CPUs=$(nproc) RealMemory=500 State=UNKNOWN
PartitionName=ci Nodes=$host Default=YES MaxTime=10 State=UP OverSubscribe=YES
CONF
export SLURM_CONF=$work/slurm.conf
slurmctld -D -f "$SLURM_CONF" > "$work/slurmctld.out.log" 2>&1 & pids+=($!)
slurmd -D -f "$SLURM_CONF" > "$work/slurmd.out.log" 2>&1 & pids+=($!)
until sinfo -h -o %t 2> /dev/null | grep -qE '^(idle|mix|alloc)'; do
  [ "$(left)" -gt 0 ] || fail "the node never came up"
  sleep 1
done

# The fleet: the committed H100 run four times over, one copy with its DRAM 20 % slower.
fleet_in=$work/in
base=$(ls -d "$repo"/results/nvidia-h100-80gb-hbm3/*/ | head -1)
[ -n "$base" ] || fail "no committed H100 run under results/"
: > "$work/runs.txt"
for k in 0 1 2 3; do
  d=$fleet_in/node$k/nvidia-h100-80gb-hbm3/run$k
  mkdir -p "$d" && cp "$base"/*.csv "$d"/
  echo "$d" >> "$work/runs.txt"
done
# Slow DRAM in copy 2: every streaming observation over 4x the L2 (DRAM, not L2) 20 % lower.
# (awk: a clean CI machine has no python; gpuprobe's observation files quote no field here.)
slow=$fleet_in/node2/nvidia-h100-80gb-hbm3/run2/bandwidth.csv
awk -F, -v OFS=, '
  /^# l2_bytes=/ { split($0, kv, "="); l2 = kv[2] }
  /^#/ { print; next }
  !head { for (i = 1; i <= NF; ++i) col[$i] = i; head = 1; print; next }
  $col["footprint_bytes"] != "" && $col["footprint_bytes"] + 0 > 4 * l2 {
    $col["value"] *= 0.8; $col["p05"] *= 0.8; $col["p50"] *= 0.8; $col["p95"] *= 0.8
  }
  { print }' "$slow" > "$slow.tmp" && mv "$slow.tmp" "$slow"

job=$(sbatch --parsable --array=0-3 --chdir="$repo" --output="$work/task-%a.log" \
  --export=ALL,GPUPROBE="$repo/build/gpuprobe",GPUPROBE_RESULTS="$work/results",GPUPROBE_ANALYZE="$work/runs.txt" \
  scripts/slurm/gpuprobe.sbatch) || fail "sbatch refused the job"
echo "ci-slurm: array job $job submitted"
while squeue -h -j "$job" 2> /dev/null | grep -q .; do
  [ "$(left)" -gt 0 ] || { scancel "$job" || true; fail "job $job did not finish in ${limit} s"; }
  sleep 1
done
runs=$(ls -d "$work/results/$job"/*/*/*/*)
[ "$(echo "$runs" | wc -l)" = 4 ] || fail "expected 4 runs in the results tree, got: $runs"
# shellcheck disable=SC2086
build/gpuprobe compare --fleet $runs --csv "$work/fleet.csv" | tee "$work/fleet.md"
grep -q "task2/.*dram_read_bandwidth" "$work/fleet.md" || fail "the slow copy's DRAM bandwidth was not flagged"
flagged=$(grep -c '^| /' "$work/fleet.md" || true)
nodes=$(grep -o '^| [^|]*task[0-9]' "$work/fleet.md" | sort -u | wc -l)
[ "$nodes" = 1 ] || fail "outliers on $nodes runs, expected only the perturbed one"
echo "ci-slurm: ok in $(( $(date +%s) - start )) s ($flagged outlier rows, all on the perturbed run)"
