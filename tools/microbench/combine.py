#!/usr/bin/env python3
"""Merge the per-topic JSON lines written by the microbenchmarks into one file:
{"what", "device", "method", "software", "results"}.
usage: combine.py [--extend EXISTING_JSON] BUILD_DIR OUT_JSON TOPIC...
--extend: start from EXISTING_JSON (keeping its topics, notes and other keys),
add or replace the given topics' results and methods, recompute "derived", and
record this run under software.added_runs."""
import json, os, platform, sys, datetime

WHAT = ("Microbenchmarks of one NVIDIA H200 SM and memory system (tools/microbench): "
        "load-to-use latencies, shared-memory bandwidth and bank conflicts, L2 and DRAM "
        "bandwidth, mma.sync and wgmma tensor-core latency/throughput, cp.async, ALU pipes, "
        "launch and block dispatch, SM clock and power under sustained load. Cycles are SM "
        "cycles read with clock64.")


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


def derive(results, method):
    results.pop("derived", None)
    method.pop("derived", None)
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
        for k, v in results.get("wgmma", {}).items():
            if k.endswith("_dependent_latency_cycles"):
                derived["wgmma_" + k.replace("_cycles", "_ns")] = round(v / mhz * 1e3, 1)
    mma = results.get("tensor_core_mma", {})
    if "shared_load_latency_cycles" in lat and "ldmatrix_x4_minus_lds32_extra_latency_cycles" in mma:
        derived["ldmatrix_x4_latency_estimate_cycles"] = round(
            lat["shared_load_latency_cycles"] + mma["ldmatrix_x4_minus_lds32_extra_latency_cycles"], 2)
    if derived:
        results["derived"] = derived
        method["derived"] = ("ns = cycles / sm_clock_measured_globaltimer_mhz; ldmatrix estimate = "
                             "shared_load_latency_cycles + (ldmatrix chain - ld.shared chain)")


def extend(path, build, out, results, method, failed, topics):
    with open(path) as f:
        doc = json.load(f)
    doc["what"] = WHAT
    doc["results"].update(results)
    doc["method"].update(method)
    derive(doc["results"], doc["method"])
    nvcc = read(os.path.join(build, "nvcc_version.txt")).splitlines()
    sw = doc.setdefault("software", {})
    sw["nvcc_flags"] = ("-O3 -std=c++17 -arch=sm_90 -lineinfo (wgmma: "
                        "-gencode=arch=compute_90a,code=sm_90a)")
    sw.setdefault("added_runs", []).append({
        "topics": [t for t in topics if t not in failed],
        "nvcc": nvcc[-1] if nvcc else "",
        "host": platform.platform(),
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ"),
        "nvidia_smi_before": smi(os.path.join(build, "smi_before.csv")),
        "nvidia_smi_after": smi(os.path.join(build, "smi_after.csv")),
    })
    if failed:
        doc["failed_topics"] = sorted(set(doc.get("failed_topics", [])) | set(failed))
    return doc


def write(doc, out):
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def main():
    args = sys.argv[1:]
    base = None
    if args and args[0] == "--extend":
        base, args = args[1], args[2:]
    build, out, topics = args[0], args[1], args[2:]
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
    if base:
        doc = extend(base, build, out, results, method, failed, topics)
        write(doc, out)
        print("wrote", out, "added topics:", ", ".join(results), "failed:", failed or "none")
        return
    clock = results.get("clock", {})
    derive(results, method)
    nvcc = read(os.path.join(build, "nvcc_version.txt")).splitlines()
    before, after = smi(os.path.join(build, "smi_before.csv")), smi(os.path.join(build, "smi_after.csv"))
    doc = {
        "what": WHAT,
        "device": clock.get("device_name", before.get("name", "unknown")),
        "method": dict(method, general="Each number is a median over repetitions (count in each "
                       "method string). Inline PTX (asm volatile / ld.volatile) keeps loads and "
                       "math from being optimised away; results are written under a runtime "
                       "flag. Clocks were left as found (no locking, no ncu clock control)."),
        "software": {
            "nvcc": nvcc[-1] if nvcc else "",
            "nvcc_flags": "-O3 -std=c++17 -arch=sm_90 -lineinfo (wgmma: "
                          "-gencode=arch=compute_90a,code=sm_90a)",
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
    write(doc, out)
    print("wrote", out, "topics:", ", ".join(results), "failed:", failed or "none")


if __name__ == "__main__":
    main()
