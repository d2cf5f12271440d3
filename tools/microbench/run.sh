#!/usr/bin/env bash
# Build every microbenchmark with nvcc -arch=sm_90 (wgmma: sm_90a), run them
# one after the other, and merge their JSON into one file. A topic with a .py
# file (clock_under_load, dequant) is a python3 (PyTorch) script instead.
#   tools/microbench/run.sh [OUT_JSON]
# Env: TOPICS="clock latency ..." to run a subset; BUILD=dir (default ./build);
#      TIMEOUT=seconds per program (default 300); SASS=1 dumps SASS (cuobjdump);
#      SKIP_BUILD=1 reuses binaries already in BUILD;
#      EXTEND=existing.json: OUT_JSON = that file with these topics added/replaced.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${BUILD:-$HERE/build}
OUT_JSON=${1:-$BUILD/h200-microbench.json}
TOPICS=${TOPICS:-"clock latency smem l2_bw dram_bw mma cp_async alu launch wgmma clock_under_load smsp_arbitration dequant block_placement smsp_phase"}
NVCC=${NVCC:-nvcc}
mkdir -p "$BUILD"

# wgmma needs the architecture-specific target; nvcc 13.0's -arch=sm_90a
# shorthand also runs a plain sm_90 pass that rejects wgmma, -gencode does not.
arch() { case $1 in wgmma) echo "-gencode=arch=compute_90a,code=sm_90a" ;; *) echo "-arch=sm_90" ;; esac; }
for t in $TOPICS; do
  [ -f "$HERE/$t.py" ] && continue
  [ "${SKIP_BUILD:-0}" = 1 ] && [ -x "$BUILD/$t" ] && continue
  $NVCC -O3 -std=c++17 $(arch $t) -lineinfo -o "$BUILD/$t" "$HERE/$t.cu" >"$BUILD/$t.build.log" 2>&1 &
done
wait
fail=0
for t in $TOPICS; do
  [ -f "$HERE/$t.py" ] && continue
  if [ ! -x "$BUILD/$t" ]; then echo "BUILD FAILED: $t"; cat "$BUILD/$t.build.log"; fail=1; fi
done
[ $fail = 0 ] || exit 1

if [ "${SASS:-0}" = 1 ] && command -v cuobjdump >/dev/null; then
  for t in $TOPICS; do [ -x "$BUILD/$t" ] && cuobjdump --dump-sass "$BUILD/$t" >"$BUILD/$t.sass" 2>&1; done
fi

SMI="name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.draw,power.limit,temperature.gpu"
nvidia-smi --query-gpu=$SMI --format=csv >"$BUILD/smi_before.csv" 2>&1 || true
$NVCC --version >"$BUILD/nvcc_version.txt" 2>&1 || true

for t in $TOPICS; do
  t0=$(date +%s)
  if [ -f "$HERE/$t.py" ]; then
    timeout "${TIMEOUT:-300}" python3 "$HERE/$t.py" >"$BUILD/$t.json" 2>"$BUILD/$t.err"
  else
    timeout "${TIMEOUT:-300}" "$BUILD/$t" >"$BUILD/$t.json" 2>"$BUILD/$t.err"
  fi
  rc=$?
  echo "$t rc=$rc $(( $(date +%s) - t0 ))s"
  [ $rc = 0 ] || { echo "--- $t stderr:"; tail -5 "$BUILD/$t.err"; }
done

nvidia-smi --query-gpu=$SMI --format=csv >"$BUILD/smi_after.csv" 2>&1 || true
python3 "$HERE/combine.py" ${EXTEND:+--extend "$EXTEND"} "$BUILD" "$OUT_JSON" $TOPICS
