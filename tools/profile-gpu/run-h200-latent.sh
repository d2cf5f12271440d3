#!/usr/bin/env bash
# What took configs/calibration/h200-latent-gemms.json: the absorbed MLA decode's batched GEMMs
# (latent_gemms.py) on one H200, output under $OUT (default: the working directory).
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
