#!/usr/bin/env bash
# Reference steps and one eager layer's kernels of the given models on one H200:
#   run-h200-models.sh NAME MODEL...  ->  $OUT/h200-NAME-profile.json, $OUT/h200-NAME-kernels.json
# One profile_gpu.py run per model (a failure costs one model), merged into one file each. Output
# under $OUT (default: the working directory); log in $OUT/NAME-profile.log. Run from the
# repository root. run-h200-moe.sh and run-h200-mla.sh say which models took which files.
set -u
name=$1
shift
out=${OUT:-.}
root=$(cd "$(dirname "$0")/../.." && pwd)
tool="$root/tools/profile-gpu"
log="$out/$name-profile.log"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$out/$name-gpu.txt"
files=()
for m in "$@"; do
  extra=()
  # Mistral's 4096-key window: a context and a prompt longer than it (rolling buffer, banded mask).
  [ "$m" = mistral-7b ] && extra=(--contexts 512,4096,16384 --prefill 1x128,1x512,1x2048,8x512,1x8192)
  timeout 170 python3 "$tool/profile_gpu.py" "$m" --batches 1,4,16,64,256 --no-ops --no-peaks \
    --spin-up-s 2 "${extra[@]}" --out "$out/h200-$m.json" >> "$log" 2>&1
  echo "$m: exit $?"
  files+=("$out/h200-$m.json")
done
python3 "$tool/merge_profiles.py" "${files[@]}" --out "$out/h200-$name-profile.json"
# One eager layer's kernels (torch.profiler) at small and large decode batches and prefills.
files=()
for m in "$@"; do
  timeout 100 python3 "$tool/profile_gpu.py" "$m" --no-steps --no-ops --no-peaks --spin-up-s 1 \
    --kernel-points decode:1x512,decode:16x4096,decode:256x4096,prefill:1x2048,prefill:8x512 \
    --out "$out/k-$m.json" >> "$log" 2>&1
  echo "$m kernels: exit $?"
  files+=("$out/k-$m.json")
done
python3 "$tool/merge_profiles.py" "${files[@]}" --out "$out/h200-$name-kernels.json"
