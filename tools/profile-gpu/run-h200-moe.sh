#!/usr/bin/env bash
# What took configs/calibration/h200-moe-profile.json and h200-moe-kernels.json: the mixture-of-experts (with and without
# shared experts), latent-attention and sliding-window reference steps (docs/performance-models.md)
# on one H200, one profile_gpu.py run per model (a failure costs one model), merged into one file.
# Output under $OUT (default: the working directory). Run from the repository root.
set -u
out=${OUT:-.}
root=$(cd "$(dirname "$0")/../.." && pwd)
tool="$root/tools/profile-gpu"
files=()
for m in mixtral-8x7b qwen1.5-moe-a2.7b qwen3-30b-a3b deepseek-v2-lite mistral-7b; do
  extra=()
  # Mistral's 4096-key window: a context and a prompt longer than it (rolling buffer, banded mask).
  [ "$m" = mistral-7b ] && extra=(--contexts 512,4096,16384 --prefill 1x128,1x512,1x2048,8x512,1x8192)
  timeout 150 python3 "$tool/profile_gpu.py" "$m" --batches 1,4,16,64,256 --no-ops --no-peaks \
    --spin-up-s 2 "${extra[@]}" --out "$out/h200-$m.json" >> "$out/moe-profile.log" 2>&1
  echo "$m: exit $?"
  files+=("$out/h200-$m.json")
done
python3 "$tool/merge_profiles.py" "${files[@]}" --out "$out/h200-moe-profile.json"
# One eager layer's kernels (torch.profiler) at small and large decode batches and prefills:
# configs/calibration/h200-moe-kernels.json.
files=()
for m in mixtral-8x7b qwen1.5-moe-a2.7b qwen3-30b-a3b deepseek-v2-lite mistral-7b; do
  timeout 100 python3 "$tool/profile_gpu.py" "$m" --no-steps --no-ops --no-peaks --spin-up-s 1 \
    --kernel-points decode:1x512,decode:16x4096,decode:256x4096,prefill:1x2048,prefill:8x512 \
    --out "$out/k-$m.json" >> "$out/moe-profile.log" 2>&1
  echo "$m kernels: exit $?"
  files+=("$out/k-$m.json")
done
python3 "$tool/merge_profiles.py" "${files[@]}" --out "$out/h200-moe-kernels.json"
