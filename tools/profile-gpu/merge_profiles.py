#!/usr/bin/env python3
"""Merge ltc-gpu-profile/1 files taken on one GPU (one profile_gpu.py run per model) into one.

    python3 tools/profile-gpu/merge_profiles.py a.json b.json ... --out merged.json

Models, steps, operators, peaks, kernel lists and skipped points are concatenated in the order
of the files; the device, driver and software must be the same in every file (else it stops,
naming the file and the field). Each model keeps the settings and the command of the run that
measured it (`models[].settings`), and the merged `settings` is the first file's."""
import argparse
import json
import sys

LISTS = ("models", "steps", "ops", "peaks", "kernels", "skipped")
SAME = ("schema", "device", "software")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", help="ltc-gpu-profile/1 JSON files")
    ap.add_argument("--out", required=True, help="merged JSON file (must not be one of the inputs)")
    args = ap.parse_args(argv)
    if args.out in args.files:
        sys.exit(f"merge_profiles: --out {args.out} is also an input")
    merged = None
    names = set()
    for path in args.files:
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            sys.exit(f"merge_profiles: {path}: {e}")
        if doc.get("schema") != "ltc-gpu-profile/1":
            sys.exit(f"merge_profiles: {path}: schema {doc.get('schema')!r}, expected 'ltc-gpu-profile/1'")
        for m in doc.get("models", []):
            if m["name"] in names:
                sys.exit(f"merge_profiles: {path}: model {m['name']} is already in an earlier file")
            names.add(m["name"])
            m["settings"] = doc.get("settings")
        if merged is None:
            merged = doc
            merged["elapsed_s"] = doc.get("elapsed_s", 0)
            merged["merged_from"] = [{"created_utc": doc.get("created_utc"), "models": [m["name"] for m in doc["models"]]}]
            continue
        for key in SAME:
            if doc.get(key) != merged.get(key):
                sys.exit(f"merge_profiles: {path}: '{key}' differs from {args.files[0]}'s")
        for key in LISTS:
            merged.setdefault(key, []).extend(doc.get(key, []))
        merged["elapsed_s"] += doc.get("elapsed_s", 0)
        merged["merged_from"].append({"created_utc": doc.get("created_utc"), "models": [m["name"] for m in doc["models"]]})
    with open(args.out, "w") as f:
        json.dump(merged, f, indent=1)
        f.write("\n")
    print(f"wrote {args.out}: {len(merged['models'])} models, {len(merged['steps'])} steps")


if __name__ == "__main__":
    main()
