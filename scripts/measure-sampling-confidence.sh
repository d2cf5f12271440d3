#!/usr/bin/env bash
# Measures the sampler's confidence table and its results file on every case set pooled
# (sim/sampler/README.md, "Confidence and measured error"), the full runs in parallel:
#   scripts/measure-sampling-confidence.sh LTC JOBS DIR
# 1. every case's full run, one process per case (JOBS at a time, one host thread each), each
#    into its own --full-cache file, merged into DIR/full-runs.json (kept: a second run of the
#    script with that file simulates only the sampled runs; delete it when the simulator changes);
# 2. the pooled sampled runs against those full runs into one table, from an empty one: a run with
#    --slice-streaming, then one without over it (the streaming rows stay from the first), copied
#    to configs/calibration/sampling-confidence.json;
# 3. the default cases' table with that confidence, docs/results/sim-sample.md.
# Run from the repository root; intermediate files and logs in DIR.
set -eu
ltc=$(realpath "$1")
jobs=$2
dir=$3
mkdir -p "$dir/full"
export LTC_THREADS=1
sets=(bench large held-out held-out-2 held-out-3)
args=()
for s in "${sets[@]}"; do args+=(--case-file "configs/sampling/$s.json"); done
# (set, case name) pairs; a name is a --case filter (a substring), so a name inside another
# runs both: the merged cache keeps one of each.
python3 - "${sets[@]}" > "$dir/cases.txt" <<'PY'
import json, sys
for s in sys.argv[1:]:
    for c in json.load(open(f"configs/sampling/{s}.json"))["cases"]:
        print(f"{s}\t{c['name']}")
PY
echo "$(wc -l < "$dir/cases.txt") cases, $jobs at a time"
run_case() {  # "index|set|name"
  IFS='|' read -r i s name <<< "$1"
  "$ltc" bench sim --only sample --case-file "configs/sampling/$s.json" --case "$name" \
    --full-cache "$dir/full/$i.json" --json > "$dir/full/$i.out" 2> "$dir/full/$i.log" ||
    echo "case $i ($s: $name) failed: see $dir/full/$i.log"
}
export -f run_case
export ltc dir
if [ ! -f "$dir/full-runs.json" ]; then
awk -F'\t' '{ print NR "|" $1 "|" $2 }' "$dir/cases.txt" |
  xargs -P "$jobs" -d '\n' -I{} bash -c 'run_case "$1"' _ {}
python3 - "$dir" <<'PY'
import glob, json, sys
d = sys.argv[1]
cache = {}
for f in sorted(glob.glob(f"{d}/full/*.json")):
    cache.update(json.load(open(f)))
json.dump(cache, open(f"{d}/full-runs.json", "w"), indent=1)
print(f"{len(cache)} full runs in {d}/full-runs.json")
PY
fi
# From an empty table: the --slice-streaming run writes every row it measures; the run without
# then replaces the rows it measures and keeps the streaming ones (sim::merge_confidence).
table="$dir/sampling-confidence.json"
rm -f "$table"
"$ltc" bench sim --only sample "${args[@]}" --full-cache "$dir/full-runs.json" \
  --slice-streaming --confidence-out "$table" > "$dir/stream.log" 2>&1
"$ltc" bench sim --only sample "${args[@]}" --full-cache "$dir/full-runs.json" \
  --confidence-out "$table" > "$dir/other.log" 2>&1
cp "$table" configs/calibration/sampling-confidence.json
cat "$table"
"$ltc" bench sim --only sample --per-kernel --full-cache "$dir/full-runs.json" \
  --markdown docs/results/sim-sample.md > "$dir/sim-sample.log" 2>&1
tail -4 "$dir/sim-sample.log"
