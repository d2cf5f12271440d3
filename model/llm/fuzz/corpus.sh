#!/bin/sh
# Seeds of config_json_fuzz in ./corpus: every shipped GPU and model JSON, each prefixed with the
# byte that picks its loader (0: GPU, 1: model). $1: the repository root.
root=$1
for f in "$root"/configs/gpus/*.json; do
  printf '\000' | cat - "$f" > "corpus/gpu-$(basename "$f")"
done
for f in "$root"/configs/models/*.json "$root"/traces/examples/*.config.json; do
  printf '\001' | cat - "$f" > "corpus/model-$(basename "$f")"
done
# Regressions: a number past double's range (nlohmann's out_of_range 406, which escaped the GPU
# loader as an uncaught exception until it caught json::exception).
printf '\000{"name": "x", "sms": 1e999}' > corpus/gpu-number-overflow.json
