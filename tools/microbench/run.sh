#!/usr/bin/env bash
# Build every microbenchmark with nvcc -arch=sm_90, run them one after the
# other, and merge their JSON into one file.
#   tools/microbench/run.sh [OUT_JSON]
# Env: TOPICS="clock latency ..." to run a subset; BUILD=dir (default ./build);
#      TIMEOUT=seconds per program (default 300); SASS=1 dumps SASS (cuobjdump);
#      SKIP_BUILD=1 reuses binaries already in BUILD.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${BUILD:-$HERE/build}
OUT_JSON=${1:-$BUILD/h200-microbench.json}
TOPICS=${TOPICS:-"clock latency smem l2_bw dram_bw mma cp_async alu launch"}
NVCC=${NVCC:-nvcc}
mkdir -p "$BUILD"

for t in $TOPICS; do
  [ "${SKIP_BUILD:-0}" = 1 ] && [ -x "$BUILD/$t" ] && continue
  $NVCC -O3 -std=c++17 -arch=sm_90 -lineinfo -o "$BUILD/$t" "$HERE/$t.cu" >"$BUILD/$t.build.log" 2>&1 &
done
wait
fail=0
for t in $TOPICS; do
  if [ ! -x "$BUILD/$t" ]; then echo "BUILD FAILED: $t"; cat "$BUILD/$t.build.log"; fail=1; fi
done
[ $fail = 0 ] || exit 1

if [ "${SASS:-0}" = 1 ] && command -v cuobjdump >/dev/null; then
  for t in $TOPICS; do cuobjdump --dump-sass "$BUILD/$t" >"$BUILD/$t.sass" 2>&1; done
fi

SMI="name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.draw,power.limit,temperature.gpu"
nvidia-smi --query-gpu=$SMI --format=csv >"$BUILD/smi_before.csv" 2>&1 || true
$NVCC --version >"$BUILD/nvcc_version.txt" 2>&1 || true

for t in $TOPICS; do
  t0=$(date +%s)
  timeout "${TIMEOUT:-300}" "$BUILD/$t" >"$BUILD/$t.json" 2>"$BUILD/$t.err"
  rc=$?
  echo "$t rc=$rc $(( $(date +%s) - t0 ))s"
  [ $rc = 0 ] || { echo "--- $t stderr:"; tail -5 "$BUILD/$t.err"; }
done

nvidia-smi --query-gpu=$SMI --format=csv >"$BUILD/smi_after.csv" 2>&1 || true
python3 "$HERE/combine.py" "$BUILD" "$OUT_JSON" $TOPICS
