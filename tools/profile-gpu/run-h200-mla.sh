#!/usr/bin/env bash
# What took configs/calibration/h200-mla-profile.json and h200-mla-kernels.json: the latent-attention
# reference steps (docs/performance-models.md) of two more MLA models on one H200, beside
# DeepSeek-V2-Lite in h200-moe-profile.json: DeepSeek-V2 (query low-rank, 128 heads, 160 experts;
# one layer's weights fit one GPU) and MiniCPM3-4B (MLA on a dense model). One profile_gpu.py run
# per model (a failure costs one model), merged into one file. Output under $OUT (default: the
# working directory). Run from the repository root.
set -u
out=${OUT:-.}
root=$(cd "$(dirname "$0")/../.." && pwd)
tool="$root/tools/profile-gpu"
models=(minicpm3-4b deepseek-v2)
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$out/mla-gpu.txt"
files=()
for m in "${models[@]}"; do
  timeout 170 python3 "$tool/profile_gpu.py" "$m" --batches 1,4,16,64,256 --no-ops --no-peaks \
    --spin-up-s 2 --out "$out/h200-$m.json" >> "$out/mla-profile.log" 2>&1
  echo "$m: exit $?"
  files+=("$out/h200-$m.json")
done
python3 "$tool/merge_profiles.py" "${files[@]}" --out "$out/h200-mla-profile.json"
# One eager layer's kernels (torch.profiler) at small and large decode batches and prefills.
files=()
for m in "${models[@]}"; do
  timeout 90 python3 "$tool/profile_gpu.py" "$m" --no-steps --no-ops --no-peaks --spin-up-s 1 \
    --kernel-points decode:1x512,decode:16x4096,decode:256x4096,prefill:1x2048,prefill:8x512 \
    --out "$out/k-$m.json" >> "$out/mla-profile.log" 2>&1
  echo "$m kernels: exit $?"
  files+=("$out/k-$m.json")
done
python3 "$tool/merge_profiles.py" "${files[@]}" --out "$out/h200-mla-kernels.json"
