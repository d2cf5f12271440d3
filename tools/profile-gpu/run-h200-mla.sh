#!/usr/bin/env bash
# What takes configs/calibration/h200-mla-profile.json and h200-mla-kernels.json: the
# latent-attention reference steps (docs/performance-models.md) of two more MLA models on one H200,
# beside DeepSeek-V2-Lite in h200-moe-profile.json: MiniCPM3-4B (MLA on a dense model) and
# DeepSeek-V2 (query low-rank, 128 heads, 160 experts; one layer's weights fit one GPU). Output
# under $OUT.
exec "$(dirname "$0")/run-h200-models.sh" mla minicpm3-4b deepseek-v2
