#!/usr/bin/env python3
"""Merge the per-topic JSON lines written by the microbenchmarks into one file:
{"what", "device", "method", "software", "results"}.
usage: combine.py BUILD_DIR OUT_JSON TOPIC..."""
import json, os, platform, sys, datetime


def read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return ""


def smi(path):
    lines = read(path).splitlines()
    if len(lines) < 2:
        return {}
    keys = [k.strip() for k in lines[0].split(",")]
    vals = [v.strip() for v in lines[1].split(",")]
    return dict(zip(keys, vals))


def main():
    build, out, topics = sys.argv[1], sys.argv[2], sys.argv[3:]
    results, method, failed = {}, {}, []
    for t in topics:
        text = read(os.path.join(build, t + ".json"))
        try:
            obj = json.loads(text.splitlines()[-1])
        except (ValueError, IndexError):
            failed.append(t)
            continue
        results[obj["topic"]] = obj["results"]
        method[obj["topic"]] = obj["method"]
    clock = results.get("clock", {})
    derived = {}
    mhz = clock.get("sm_clock_measured_globaltimer_mhz")
    lat = results.get("latency", {})
    if mhz:
        for k in ("l1_hit_latency_cycles", "l2_hit_latency_cycles", "dram_latency_cycles",
                  "shared_load_latency_cycles", "l2_near_cluster_latency_cycles",
                  "l2_far_cluster_latency_cycles"):
            if k in lat:
                derived[k.replace("_cycles", "_ns")] = round(lat[k] / mhz * 1e3, 1)
    mma = results.get("tensor_core_mma", {})
    if "shared_load_latency_cycles" in lat and "ldmatrix_x4_minus_lds32_extra_latency_cycles" in mma:
        derived["ldmatrix_x4_latency_estimate_cycles"] = round(
            lat["shared_load_latency_cycles"] + mma["ldmatrix_x4_minus_lds32_extra_latency_cycles"], 2)
    if derived:
        results["derived"] = derived
        method["derived"] = ("ns = cycles / sm_clock_measured_globaltimer_mhz; ldmatrix estimate = "
                             "shared_load_latency_cycles + (ldmatrix chain - ld.shared chain)")
    nvcc = read(os.path.join(build, "nvcc_version.txt")).splitlines()
    before, after = smi(os.path.join(build, "smi_before.csv")), smi(os.path.join(build, "smi_after.csv"))
    doc = {
        "what": "Microbenchmarks of one NVIDIA H200 SM and memory system (tools/microbench): "
                "load-to-use latencies, shared-memory bandwidth and bank conflicts, L2 and DRAM "
                "bandwidth, mma.sync tensor-core latency/throughput, cp.async, ALU pipes, launch "
                "and block dispatch. Cycles are SM cycles read with clock64.",
        "device": clock.get("device_name", before.get("name", "unknown")),
        "method": dict(method, general="Each number is a median over repetitions (count in each "
                       "method string). Inline PTX (asm volatile / ld.volatile) keeps loads and "
                       "math from being optimised away; results are written under a runtime "
                       "flag. Clocks were left as found (no locking, no ncu clock control)."),
        "software": {
            "nvcc": nvcc[-1] if nvcc else "",
            "nvcc_flags": "-O3 -std=c++17 -arch=sm_90 -lineinfo",
            "nvidia_driver": before.get("driver_version", ""),
            "cuda_driver_api_version": clock.get("cuda_driver_version"),
            "cuda_runtime_version": clock.get("cuda_runtime_version"),
            "host": platform.platform(),
            "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ"),
            "nvidia_smi_before": before,
            "nvidia_smi_after": after,
        },
        "results": results,
    }
    if failed:
        doc["failed_topics"] = failed
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print("wrote", out, "topics:", ", ".join(results), "failed:", failed or "none")


if __name__ == "__main__":
    main()
