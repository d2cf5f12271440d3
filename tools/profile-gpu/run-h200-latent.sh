#!/usr/bin/env bash
# The absorbed MLA decode's batched GEMMs (latent_gemms.py) on one H200, output under $OUT (default:
# the working directory). configs/calibration/h100-latent-gemms.json is this sweep on an H100 (same
# sm90 kernels and 132 SMs; the rule and rates of cuBLAS's gemmSN GEMVs in model/roofline come
# from it).
set -u
out=${OUT:-.}
root=$(cd "$(dirname "$0")/../.." && pwd)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv \
  > "$out/nvidia-smi.txt" 2>&1
python3 "$root/tools/profile-gpu/latent_gemms.py" --out "$out/h200-latent-gemms.json" \
  --time-budget-s "${BUDGET_S:-470}" 2> "$out/latent-gemms.log"
rc=$?
tail -n 5 "$out/latent-gemms.log"
exit $rc
