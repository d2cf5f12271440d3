#!/usr/bin/env python3
"""CUDA-core work of dequantizing weights in real W4A16 GEMM kernels (Nsight Compute counters).

What the compiler's dequantize-then-MAC kernels and the roofline charge per weight code
(`model/hw/dequant.h`) is set from this. Three kernel families, each launched once under
`ncu --clock-control none` (clocks are only read) with per-pipe instruction counters:

  tinygemm  torch._weight_int4pack_mm: PyTorch's hand-written W4A16 (bf16) kernel, int4 codes
            with a bf16 scale and zero per group of 128, mma.sync m16n8k16 with the weights
            as the A operand; the kernel gpt-fast and torchao run for int4 decode.
  triton    a Triton GEMM written here twice with the same tiles, warps and stages: w4 reads
            int4 codes (two per byte, group-128 fp16 scales and zeros folded into one FMA:
            w = q * s + z) and dequantizes each K tile in registers before tl.dot; w16 reads
            fp16 weights. The difference of the pair's CUDA-core instructions is the
            dequantize work alone.
  cublas    F.linear in bf16 for the same shapes: time only, the reference without codes.

Per case: time (CUDA events, median of 20 launches, outside ncu), warp instructions by pipe
(alu, fma, fp16, xu: the CUDA cores; lsu, tensor, uniform, cbu, adu), thread instructions by
class, and the per-opcode histogram where ncu gives it. The figure kept is CUDA-core thread
instructions per weight code per dequantization (a block dequantizes its W tile once per
block row, so M / BM times for Triton; tinygemm once per 16-row tile of M).

usage: dequant.py [--quick]          prints one JSON line {"topic": "dequant", ...}
       dequant.py --child CASES.json (run under ncu by the driver)
Env: DEQUANT_RAW=dir keeps ncu's raw CSV and log there.
"""
import csv
import io
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

GROUP = 128
NK = (8192, 8192)  # N, K of every case
TINY_M = [1, 16, 64, 256]
TRITON = [  # M, BM, BN, BK, warps, stages
    (16, 16, 128, 128, 4, 4),
    (256, 128, 128, 64, 8, 3),
    (2048, 128, 128, 64, 8, 3),
]
CUBLAS_M = [16, 256, 2048]

# Per-SMSP pipes that execute CUDA-core (non-tensor, non-memory) instructions on sm_90.
CUDA_PIPES = ["alu", "fma", "fp16", "xu"]
OTHER_PIPES = ["lsu", "uniform", "cbu", "adu", "tensor"]
METRICS = (
    ["gpu__time_duration.sum", "sm__cycles_elapsed.avg", "smsp__inst_executed.sum",
     "smsp__thread_inst_executed.sum"]
    + [f"smsp__inst_executed_pipe_{p}.sum" for p in CUDA_PIPES + OTHER_PIPES + ["fmaheavy"]]
    + [f"smsp__sass_thread_inst_executed_op_{c}_pred_on.sum"
       for c in ["integer", "fp16", "fp32", "conversion", "memory", "control", "misc",
                 "inter_thread_communication", "uniform"]]
    + ["sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active",
       "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active",
       "sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active",
       "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
       "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
       "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active",
       "smsp__issue_active.avg.pct_of_peak_sustained_active"])
OPCODES = "sass__inst_executed_per_opcode"


@triton.jit
def _gemm(a_ptr, w_ptr, s_ptr, z_ptr, c_ptr, M, N, K, GROUP: tl.constexpr, BM: tl.constexpr,
          BN: tl.constexpr, BK: tl.constexpr, W4: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    am = rm[:, None] < M
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        if W4:
            # byte j of a K tile's row pair holds code k0 + j (low nibble) and k0 + BK/2 + j
            rk = tl.arange(0, BK // 2)
            a_lo = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :], mask=am, other=0.0)
            a_hi = tl.load(a_ptr + rm[:, None] * K + (k0 + BK // 2 + rk)[None, :], mask=am,
                           other=0.0)
            p = tl.load(w_ptr + (k0 // 2 + rk)[:, None] * N + rn[None, :])
            g = k0 // GROUP
            s = tl.load(s_ptr + g * N + rn)[None, :]
            z = tl.load(z_ptr + g * N + rn)[None, :]
            lo = (p & 0xF).to(tl.float16) * s + z
            hi = (p >> 4).to(tl.float16) * s + z
            acc = tl.dot(a_lo, lo, acc)
            acc = tl.dot(a_hi, hi, acc)
        else:
            rk = tl.arange(0, BK)
            a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :], mask=am, other=0.0)
            w = tl.load(w_ptr + (k0 + rk)[:, None] * N + rn[None, :])
            acc = tl.dot(a, w, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=am)


class Case:
    def __init__(self, family, m, cfg=None, w4=True):
        self.family, self.m, self.cfg, self.w4 = family, m, cfg, w4
        n, k = NK
        self.n, self.k = n, k
        self.name = f"{family}{'-w4' if w4 and family == 'triton' else ''}" \
                    f"{'-w16' if not w4 and family == 'triton' else ''} M={m}"

    def setup(self):
        dev, m, n, k = "cuda", self.m, self.n, self.k
        g = torch.Generator(device=dev).manual_seed(1)
        if self.family == "tinygemm":
            q = torch.randint(0, 16, (n, k), device=dev, dtype=torch.int32, generator=g)
            packed = ((q[:, ::2] << 4) | q[:, 1::2]).to(torch.uint8)
            self.t = (torch.randn(m, k, device=dev, dtype=torch.bfloat16, generator=g),
                      torch._convert_weight_to_int4pack(packed, 8), GROUP,
                      torch.stack([torch.full((k // GROUP, n), 0.01, device=dev),
                                   torch.full((k // GROUP, n), -0.08, device=dev)],
                                  dim=2).to(torch.bfloat16).contiguous())
        elif self.family == "cublas":
            self.t = (torch.randn(m, k, device=dev, dtype=torch.bfloat16, generator=g),
                      torch.randn(n, k, device=dev, dtype=torch.bfloat16, generator=g) * k ** -0.5)
        else:
            _, bm, bn, bk, warps, stages = self.cfg
            self.a = torch.randn(m, k, device=dev, dtype=torch.float16, generator=g)
            self.c = torch.empty(m, n, device=dev, dtype=torch.float16)
            self.grid = (triton.cdiv(m, bm), triton.cdiv(n, bn))
            if self.w4:
                q = torch.randint(0, 16, (k, n), device=dev, dtype=torch.int32, generator=g)
                s = (torch.rand(k // GROUP, n, device=dev, generator=g) * 0.02 + 0.005).half()
                zero = torch.randint(0, 16, (k // GROUP, n), device=dev, generator=g).half()
                z = (-zero * s).half()
                # repack: in each K tile of bk, byte j = code j (low) | code bk/2 + j (high)
                qt = q.view(k // bk, 2, bk // 2, n)
                self.w = (qt[:, 0] | (qt[:, 1] << 4)).reshape(k // 2, n).to(torch.uint8)
                self.s, self.z = s, z
                self.ref_w = (q.half() * s.repeat_interleave(GROUP, 0)
                              + z.repeat_interleave(GROUP, 0))
            else:
                self.w = torch.randn(k, n, device=dev, dtype=torch.float16, generator=g) * k ** -0.5
                self.s = self.z = self.w  # unused
                self.ref_w = self.w

    def run(self):
        if self.family == "tinygemm":
            return torch._weight_int4pack_mm(*self.t)
        if self.family == "cublas":
            return F.linear(*self.t)
        _, bm, bn, bk, warps, stages = self.cfg
        _gemm[self.grid](self.a, self.w, self.s, self.z, self.c, self.m, self.n, self.k, GROUP,
                         bm, bn, bk, self.w4, num_warps=warps, num_stages=stages)
        return self.c

    def check(self):
        """Largest relative error of the kernel's output against torch on the same weights."""
        out = self.run().float()
        if self.family == "tinygemm":
            n, k = self.n, self.k
            q = torch.randint(0, 16, (n, k), device="cuda", dtype=torch.int32,
                              generator=torch.Generator(device="cuda").manual_seed(1))
            ref = self.t[0].float() @ ((q.float() - 8) * 0.01 - 0.08).t()
            # tinygemm's codes are offset by 8 and its zero is added: w = (q - 8) * s + z
            return float((out - ref).abs().max() / ref.abs().max())
        if self.family == "cublas":
            return 0.0
        ref = self.a.float() @ self.ref_w.float()
        return float((out - ref).abs().max() / ref.abs().max())

    def codes_dequantized(self):
        """Weight codes the kernel dequantizes: N * K per block row of M."""
        if self.family == "tinygemm":
            return self.n * self.k * -(-self.m // 16)
        if self.family == "triton" and self.w4:
            return self.n * self.k * -(-self.m // self.cfg[1])
        return 0


def cases():
    out = [Case("tinygemm", m) for m in TINY_M]
    for cfg in TRITON:
        out += [Case("triton", cfg[0], cfg, True), Case("triton", cfg[0], cfg, False)]
    out += [Case("cublas", m) for m in CUBLAS_M]
    return out


def child(path):
    cs = cases()
    for c in cs:
        c.setup()
        c.run()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    for c in cs:
        c.run()
        torch.cuda._sleep(1000)  # a marker kernel between cases
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
    with open(path, "w") as f:
        json.dump([c.name for c in cs], f)


def num(x):
    try:
        return float(str(x).split("(")[0].replace(",", ""))
    except ValueError:
        return None


def parse_ncu_csv(text):
    """Rows of ncu --csv --page raw: header, units row, one row per kernel."""
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    if len(rows) < 2:
        return []
    head = rows[0]
    return [dict(zip(head, r)) for r in rows[2:]]


def available_metrics():
    r = subprocess.run(["ncu", "--query-metrics", "--csv"], capture_output=True, text=True)
    names = set()
    for row in csv.reader(io.StringIO(r.stdout)):
        if row:
            names.add(row[0].strip())
    return names


def profile(raw_dir, names_file):
    have = available_metrics()
    metrics = [m for m in METRICS if m.split(".")[0] in have] if have else list(METRICS)
    missing = [m for m in METRICS if m not in metrics]
    base = ["ncu", "--clock-control", "none", "--profile-from-start", "off", "--csv",
            "--page", "raw", "--log-file"]
    attempts = [(metrics + [OPCODES], ["--print-metric-instances", "details"]), (metrics, [])]
    for mlist, extra in attempts:
        log = os.path.join(raw_dir, "ncu.csv")
        cmd = base + [log, "--metrics", ",".join(mlist)] + extra + \
            [sys.executable, os.path.abspath(__file__), "--child", names_file]
        r = subprocess.run(cmd, capture_output=True, text=True)
        with open(os.path.join(raw_dir, "ncu.stderr"), "a") as f:
            f.write(" ".join(cmd) + "\n" + r.stdout[-4000:] + r.stderr[-4000:] + "\n")
        text = open(log).read() if os.path.exists(log) else ""
        rows = parse_ncu_csv(text)
        if r.returncode == 0 and rows:
            return rows, missing, " ".join(cmd[:-3]), bool(extra)
    raise SystemExit(f"ncu failed: {r.stderr[-2000:]}")


def opcode_histogram(cell):
    """An instanced metric under --print-metric-instances details: 'total (OPC: n; OPC: n ...)'."""
    out = {}
    inner = str(cell).split("(", 1)[1] if "(" in str(cell) else ""
    for k, v in re.findall(r"([A-Za-z][A-Za-z0-9_.]*)\s*[:=]\s*([0-9][0-9,.]*)", inner):
        x = num(v)
        if x is not None:
            out[k] = out.get(k, 0) + x
    return out


def time_us(c, reps=20):
    for _ in range(3):
        c.run()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        c.run()
        e1.record()
        e1.synchronize()
        ts.append(e0.elapsed_time(e1) * 1e3)
    return statistics.median(ts)


def driver():
    raw_dir = os.environ.get("DEQUANT_RAW") or tempfile.mkdtemp(prefix="dequant-")
    os.makedirs(raw_dir, exist_ok=True)
    cs = cases()
    timing = {}
    for c in cs:
        c.setup()
        err = c.check()
        timing[c.name] = {"us": time_us(c), "max_rel_err": err}
        c.w = c.t = c.a = c.c = c.ref_w = None
        torch.cuda.empty_cache()
    names_file = os.path.join(raw_dir, "cases.json")
    rows, missing, cmd, with_opcodes = profile(raw_dir, names_file)
    names = json.load(open(names_file))
    # split the kernel rows at the marker kernels
    groups, cur = [], []
    for row in rows:
        if "sleep" in row.get("Kernel Name", "") or "spin" in row.get("Kernel Name", ""):
            groups.append(cur)
            cur = []
        else:
            cur.append(row)
    results = {}
    for c, name, g in zip(cs, names, groups):
        agg = {}
        hist = {}
        for row in g:
            for m in METRICS:
                v = num(row.get(m))
                if v is not None:
                    agg[m] = agg.get(m, 0) + v if m.endswith(".sum") else v
            if with_opcodes:
                for k, v in opcode_histogram(row.get(OPCODES, "")).items():
                    hist[k] = hist.get(k, 0) + v
        pipes = {p: agg.get(f"smsp__inst_executed_pipe_{p}.sum") for p in
                 CUDA_PIPES + OTHER_PIPES + ["fmaheavy"]}
        cuda_warp = sum(v for p, v in pipes.items() if p in CUDA_PIPES and v)
        r = {"m": c.m, "n": c.n, "k": c.k, "kernels": [row.get("Kernel Name", "") for row in g],
             "time_us": timing[name]["us"], "max_rel_err": timing[name]["max_rel_err"],
             "tflops": 2 * c.m * c.n * c.k / timing[name]["us"] * 1e-6,
             "warp_inst_by_pipe": pipes, "cuda_core_thread_inst": 32 * cuda_warp,
             "counters": agg}
        if c.cfg:
            r["tile"] = dict(zip(["bm", "bn", "bk", "warps", "stages"], c.cfg[1:]))
        if hist:
            r["opcodes"] = dict(sorted(hist.items(), key=lambda kv: -kv[1]))
        codes = c.codes_dequantized()
        if codes:
            r["codes_dequantized"] = codes
            r["cuda_core_thread_inst_per_code"] = 32 * cuda_warp / codes
        results[name] = r
    # the Triton pairs: dequantize work alone = w4 - w16 with the same tiles
    pairs = {}
    for cfg in TRITON:
        w4, w16 = results.get(f"triton-w4 M={cfg[0]}"), results.get(f"triton-w16 M={cfg[0]}")
        if not (w4 and w16):
            continue
        codes = w4["codes_dequantized"]
        per_pipe = {p: 32 * ((w4["warp_inst_by_pipe"][p] or 0) - (w16["warp_inst_by_pipe"][p] or 0))
                    / codes for p in CUDA_PIPES}
        pairs[f"M={cfg[0]}"] = {"codes_dequantized": codes,
                                "cuda_core_thread_inst_per_code": sum(per_pipe.values()),
                                "by_pipe_per_code": per_pipe,
                                "time_w4_over_w16": w4["time_us"] / w16["time_us"]}
        o4, o16 = w4.get("opcodes", {}), w16.get("opcodes", {})
        diff = {op: 32 * (o4.get(op, 0) - o16.get(op, 0)) / codes for op in set(o4) | set(o16)}
        if diff:
            pairs[f"M={cfg[0]}"]["opcodes_added_per_code"] = {
                op: round(v, 4) for op, v in sorted(diff.items(), key=lambda kv: -abs(kv[1]))
                if abs(v) >= 0.01}
    method = ("each case launched once under " + cmd + " after a warm-up launch, cases split "
              "at torch.cuda._sleep marker kernels; times: CUDA events, median of 20 launches "
              "outside ncu; CUDA-core instructions = smsp__inst_executed_pipe_{alu,fma,fp16,xu} "
              "x 32 (warp to thread instructions; partial warps counted whole); per code: over "
              "N*K*ceil(M/BM) codes dequantized (tinygemm BM = 16); Triton pairs: w4 - w16 with "
              f"the same tiles. Metrics ncu did not know: {missing or 'none'}")
    print(json.dumps({"topic": "dequant", "results": {"cases": results, "triton_pairs": pairs,
                                                      "torch": torch.__version__,
                                                      "triton": triton.__version__},
                      "method": method}))


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2])
    else:
        driver()
