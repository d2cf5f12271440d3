#!/usr/bin/env bash
# What took configs/calibration/h200-gemm-kinds.json: the GEMM-kind sweep (gemm_kinds.py) on one
# H200, output under $OUT (default: the working directory). Run from the repository root, or from a
# copy of tools/profile-gpu/ and configs/ (models, calibration/profile-models) as its root.
set -u
out=${OUT:-.}
root=$(cd "$(dirname "$0")/../.." && pwd)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv \
  > "$out/nvidia-smi.txt" 2>&1
python3 -c "import torch; print(torch.__version__, torch.cuda.get_device_name(0))" >> "$out/nvidia-smi.txt" 2>&1
python3 "$root/tools/profile-gpu/gemm_kinds.py" --out "$out/h200-gemm-kinds.json" \
  --time-budget-s "${BUDGET_S:-400}" --kernel-budget-s 45 2> "$out/gemm-kinds.log"
rc=$?
tail -n 5 "$out/gemm-kinds.log"
exit $rc
