#!/usr/bin/env bash
# What took configs/calibration/h200-moe-profile.json and h200-moe-kernels.json: the
# mixture-of-experts (with and without shared experts), latent-attention and sliding-window
# reference steps (docs/performance-models.md) on one H200. Output under $OUT.
exec "$(dirname "$0")/run-h200-models.sh" moe mixtral-8x7b qwen1.5-moe-a2.7b qwen3-30b-a3b \
  deepseek-v2-lite mistral-7b
