#!/usr/bin/env python3
"""SM clock, power and temperature while the GPU runs a long cuBLAS load.

Two loads, each replayed from a CUDA graph back to back for about 3 s:
  gemm: fp16 torch.nn.functional.linear, M = N = K = 8192 (compute-bound)
  gemv: fp16 torch.nn.functional.linear, M = 1, N = K = 16384 (memory-bound)
while `nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu
--format=csv,noheader,nounits -lms 100` samples in a background process.
Samples inside each load window are summarised (clock: first 0.3 s dropped;
power: first 1.1 s dropped, since power.draw is a 1-s average). Right after each
load, a probe kernel (CuPy/NVRTC, one thread per SM, no tensor work) queued on
the same stream reads clock64 against %globaltimer in 20 windows of 20 us: the
clock the SMs actually run at, which under tensor load is below what nvidia-smi
reports (see the wgmma topic). clocks_event_reasons.active is read once in the
middle of each load. Prints one JSON line {"topic": "clock_under_load", ...}.
usage: clock_under_load.py [SECONDS_PER_LOAD]   (CLOCK_CSV=path keeps the raw samples)
"""
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import torch
import torch.nn.functional as F

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
SKIP_S = 0.3  # clock ramp-up at the start of a load window, not summarised
SKIP_POWER_S = 1.1  # nvidia-smi power.draw is a 1-s average
SMI = ["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu",
       "--format=csv,noheader,nounits", "-lms", "100"]
PROBE_WINDOWS, PROBE_WIN_NS = 20, 20000
REASONS = ["nvidia-smi", "--query-gpu=clocks_event_reasons.active,"
           "clocks_event_reasons.sw_power_cap,clocks_event_reasons.hw_slowdown,"
           "clocks_event_reasons.hw_power_brake_slowdown,"
           "clocks_event_reasons.sw_thermal_slowdown,clocks_event_reasons.hw_thermal_slowdown",
           "--format=csv"]
PROBE_SRC = r"""
extern "C" __global__ void probe(int windows, long long win_ns, long long* out) {
  for (int w = 0; w < windows; w++) {
    unsigned long long g0, g1;
    long long c0, c1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0) :: "memory");
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(c0) :: "memory");
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1) :: "memory"); }
    while ((long long)(g1 - g0) < win_ns);
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(c1) :: "memory");
    long long* o = out + 2 * ((long long)blockIdx.x * windows + w);
    o[0] = c1 - c0;
    o[1] = (long long)(g1 - g0);
  }
}
"""


class Probe:
    """clock64 / globaltimer windows on every SM, launched on torch's current stream."""

    def __init__(self):
        import cupy as cp
        self.cp = cp
        self.sms = torch.cuda.get_device_properties(0).multi_processor_count
        self.kern = cp.RawKernel(PROBE_SRC, "probe")
        self.out = cp.zeros(2 * self.sms * PROBE_WINDOWS, dtype=cp.int64)
        self.launch()
        torch.cuda.synchronize()

    def launch(self):
        import numpy as np
        with self.cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            self.kern((self.sms,), (1,), (np.int32(PROBE_WINDOWS), np.int64(PROBE_WIN_NS),
                                          self.out))

    def mhz_per_window(self):
        o = self.out.get().reshape(self.sms, PROBE_WINDOWS, 2)
        return [round(float(statistics.median(o[:, w, 0] / o[:, w, 1] * 1e3)), 1)
                for w in range(PROBE_WINDOWS)]




def parse_samples(path):
    out = []
    with open(path) as f:
        for line in f:
            parts = [p.strip() for p in line.split(",")]
            if len(parts) != 4:
                continue
            try:
                t = datetime.datetime.strptime(parts[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
                out.append((t, float(parts[1]), float(parts[2]), float(parts[3])))
            except ValueError:
                continue
    return out


def summarise(samples, t0, t1, prefix, r):
    sel = [s for s in samples if t0 + SKIP_S <= s[0] <= t1]
    psel = [s for s in samples if t0 + SKIP_POWER_S <= s[0] <= t1] or sel
    r[prefix + "nvidia_smi_samples"] = len(sel)
    if not sel:
        return
    clk = [s[1] for s in sel]
    pw = [s[2] for s in psel]
    r[prefix + "sm_clock_mhz_median"] = statistics.median(clk)
    r[prefix + "sm_clock_mhz_min"] = min(clk)
    r[prefix + "sm_clock_mhz_max"] = max(clk)
    r[prefix + "power_w_median"] = round(statistics.median(pw), 2)
    r[prefix + "power_w_max"] = round(max(pw), 2)
    r[prefix + "temperature_c_max"] = max(s[3] for s in sel)


def make_graph(M, N, K, reps):
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(M, K, device="cuda", dtype=torch.float16, generator=g)
    w = torch.randn(N, K, device="cuda", dtype=torch.float16, generator=g)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            y = F.linear(x, w)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(reps):
            y = F.linear(x, w)
    torch.cuda.synchronize()
    return graph, (x, w, y)


def reasons_later(delay, r, key):
    """Read the clock event reasons once, `delay` s from now (in a thread)."""
    def run():
        time.sleep(delay)
        try:
            out = subprocess.run(REASONS, capture_output=True, text=True, timeout=10).stdout
            lines = out.strip().splitlines()
            keys = [k.strip() for k in lines[0].split(",")]
            vals = [v.strip() for v in lines[1].split(",")]
            r[key] = dict(zip(keys, vals))
        except Exception as e:  # noqa: BLE001 - recorded, not fatal
            r[key] = "failed: %s" % e
    t = threading.Thread(target=run)
    t.start()
    return t


def load(name, M, N, K, reps, r, probe):
    """Replay a graph of `reps` GEMMs back to back for about SECONDS."""
    graph, keep = make_graph(M, N, K, reps)
    graph.replay()  # warm-up, and a first estimate of one replay
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(3):
        graph.replay()
    torch.cuda.synchronize()
    per = (time.perf_counter() - t) / 3
    n = max(1, int(SECONDS / per))
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    p = name + "_"
    th = reasons_later(SECONDS / 2, r, p + "clocks_event_reasons_mid_load")
    w0 = time.time()
    e0.record()
    for _ in range(n):
        graph.replay()
    e1.record()
    if probe:
        probe.launch()  # queued right behind the last GEMM
    torch.cuda.synchronize()
    w1 = time.time()
    th.join()
    if probe:
        r[p + "probe_after_sm_clock_mhz_per_20us"] = probe.mhz_per_window()
    sec = e0.elapsed_time(e1) * 1e-3
    calls = n * reps
    flop = 2.0 * M * N * K * calls
    byts = 2.0 * (M * K + N * K + M * N) * calls
    r[p + "shape_mnk"] = [M, N, K]
    r[p + "seconds"] = round(sec, 3)
    r[p + "calls"] = calls
    r[p + "us_per_call"] = round(sec / calls * 1e6, 3)
    r[p + "tflops"] = round(flop / sec / 1e12, 2)
    r[p + "gbytes_per_s"] = round(byts / sec / 1e9, 1)
    del graph, keep
    torch.cuda.synchronize()
    return w0, w1


def main():
    r = {"device_name": torch.cuda.get_device_name(0), "torch_version": torch.__version__,
         "cuda_version": torch.version.cuda}
    try:
        probe = Probe()
    except Exception as e:  # noqa: BLE001 - the probe is optional (needs CuPy)
        probe = None
        r["probe_error"] = str(e)[:200]
    fd, path = tempfile.mkstemp(suffix=".csv")
    os.close(fd)
    with open(path, "w") as f:
        proc = subprocess.Popen(SMI, stdout=f, stderr=subprocess.DEVNULL)
    try:
        time.sleep(1.0)  # let the sampler start
        windows = {}
        windows["gemm_fp16_8192"] = load("gemm_fp16_8192", 8192, 8192, 8192, 10, r, probe)
        time.sleep(1.0)
        windows["gemv_fp16_1x16384x16384"] = load("gemv_fp16_1x16384x16384", 1, 16384, 16384, 200, r,
                                                  probe)
        time.sleep(0.3)
    finally:
        proc.terminate()
        proc.wait()
    samples = parse_samples(path)
    if os.environ.get("CLOCK_CSV"):  # keep the raw samples
        import shutil
        shutil.copy(path, os.environ["CLOCK_CSV"])
    if not samples:
        with open(path) as f:
            r["nvidia_smi_unparsed_first_line"] = f.readline().strip()
    os.unlink(path)
    for name, (w0, w1) in windows.items():
        summarise(samples, w0, w1, name + "_", r)
    method = {
        "loads": "torch.nn.functional.linear fp16 (cuBLAS), X[M,K] @ W[N,K]^T, randn data; "
                 "gemm 8192x8192x8192 captured 10 times in one CUDA graph, gemv M=1 "
                 "N=K=16384 captured 200 times; the graph replayed back to back for about "
                 "%.1f s after 4 warm-up replays; TFLOP/s = 2*M*N*K*calls / CUDA-event time; "
                 "GB/s counts X, W and Y once per call" % SECONDS,
        "clock_power": "nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,"
                       "temperature.gpu -lms 100 in a background process; samples whose "
                       "timestamp lies in the load's wall-clock window, its first %.1f s "
                       "(power: %.1f s, power.draw being a 1-s average) dropped, summarised "
                       "(median/min/max); gemm first, 1 s idle, then gemv; "
                       "clocks_event_reasons read once half-way through each load"
                       % (SKIP_S, SKIP_POWER_S),
        "probe": "probe_after_sm_clock_mhz_per_20us: a CuPy (NVRTC) kernel queued on the "
                 "same stream right behind the last GEMM, one thread per SM spinning on "
                 "%%globaltimer; clock64 delta / globaltimer delta in %d consecutive windows of "
                 "%d us, median over SMs per window" % (PROBE_WINDOWS, PROBE_WIN_NS // 1000),
    }
    print(json.dumps({"topic": "clock_under_load", "results": r, "method": method}))


if __name__ == "__main__":
    main()
