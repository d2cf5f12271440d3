#!/usr/bin/env python3
"""ltc GEMM-kind sweep: every GEMM kind the roofline fits, across M, at the models' linear shapes.

For each distinct linear-layer shape (N, K) of the given models (qkv, o, gate_up/up, down, as
profile_gpu.py builds them) and each M of --ms, times Y[M,N] = X[M,K] W[N,K]^T on each kind:
  fp16, bf16   F.linear (cuBLAS)
  int8         torch._int_mm (int8 x int8 -> int32, cuBLASLt; M <= 16 runs at 17 where rejected)
  fp8          torch._scaled_mm (e4m3 x e4m3, tensor-wise scales, fp16 out; M padded to 16)
  int4wo       torch._weight_int4pack_mm (bf16 activations, int4 weights, group 128: tinygemm)
with the profile's method (CUDA-graph replay, operand sets cycled so the bytes touched exceed
3 x L2, median). A shape shared by several models is measured once (the record's `models` lists
them). Then, under --kernel-budget-s, the kernels each kind launches (torch.profiler) for the
shapes of --kernel-models, so the tiles the libraries pick are on record.

Writes schema ltc-gpu-profile/1 (tools/profile-gpu/README.md) with no steps: `ltc calibrate`
reads its `ops` as GEMM measurements. --dry-run prints the plan without a GPU or PyTorch.
"""

import argparse
import json
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import profile_gpu as pg  # noqa: E402

KINDS = ["fp16", "bf16", "int8", "fp8", "int4wo"]
DEFAULT_MODELS = ["llama2-7b", "llama2-13b", "llama2-70b", "llama3-8b", "llama3.2-1b", "qwen2.5-7b",
                  "gemma-2-2b", "phi-2", "falcon-7b", "opt-6.7b"]
DEFAULT_MS = "1,4,16,32,64,100,128,200,256,384,512,1000,1024,2048,3000,4096,8192"


def build_parser():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("models", nargs="*", default=DEFAULT_MODELS, help="models whose linear shapes are swept")
    ap.add_argument("--out", default="gemm-kinds.json", help="output JSON (rewritten as it goes)")
    ap.add_argument("--ms", default=DEFAULT_MS, help="GEMM rows M")
    ap.add_argument("--kinds", default=",".join(KINDS), help="GEMM kinds")
    pg.add_run_options(ap, "shapes", warmup=3, reps=15)
    ap.add_argument("--kernel-models", default="llama2-7b,llama3-8b",
                    help="models whose shapes get a kernel list per kind and M")
    ap.add_argument("--kernel-budget-s", type=float, default=40, help="at most this long listing kernels")
    ap.add_argument("--dry-run", action="store_true", help="print the plan; needs no GPU")
    return ap


def plan(args):
    shapes = {}  # (N, K) -> {"names": [...], "models": [...]}; first model owns it
    order = []
    models = []
    for spec in args.models:
        name, raw, src = pg.resolve_model(spec)
        s = pg.normalize(name, raw)
        models.append((name, src, s))
        for gname, N, K in pg.gemm_shapes(s):
            key = (N, K)
            if key not in shapes:
                shapes[key] = {"model": name, "name": gname, "models": []}
                order.append(key)
            shapes[key]["models"].append(f"{name}.{gname}")
    ms = [int(x) for x in args.ms.split(",") if x]
    kinds = [k for k in args.kinds.split(",") if k]
    for k in kinds:
        if k not in KINDS:
            raise SystemExit(f"--kinds: '{k}' is not a kind (valid: {', '.join(KINDS)})")
    if not ms or min(ms) < 1:
        raise SystemExit("--ms: give positive integers, e.g. 1,16,256")
    return models, [(k, shapes[k]) for k in order], ms, kinds


def bench(g, M, N, K, l2, warmup, reps):
    """pg.bench_sets with calls per graph sized so one replay lasts >= 0.3 ms."""
    t = g.make(M, N, K)
    g.run(t)
    pg.torch.cuda.synchronize()
    e0, e1 = pg.torch.cuda.Event(enable_timing=True), pg.torch.cuda.Event(enable_timing=True)
    e0.record()
    g.run(t)
    e1.record()
    pg.torch.cuda.synchronize()
    once = max(1e-3, e0.elapsed_time(e1))
    del t
    calls = int(min(16, max(4 if once < 1 else 1, math.ceil(0.3 / once))))
    if once > 2:
        warmup, reps = 2, max(5, reps // 2)
    return pg.bench_sets(lambda: g.make(M, N, K), g.run, g.bytes(M, N, K), l2, warmup, reps, min_calls=calls)


def main(argv=None):
    args = build_parser().parse_args(argv)
    models, shapes, ms, kinds = plan(args)
    if args.dry_run:
        json.dump({"models": [m[0] for m in models], "ms": ms, "kinds": kinds,
                   "shapes": [{"N": n, "K": k, **v} for (n, k), v in shapes],
                   "measurements": len(shapes) * len(ms) * len(kinds)}, sys.stdout, indent=1)
        print()
        return 0
    t_start = time.time()
    dev, dinfo, l2 = pg.open_device(args.device)
    torch = pg.torch
    log = lambda *a: print(*a, file=sys.stderr, flush=True)  # noqa: E731
    doc = pg.sweep_doc(
        ("GEMM kinds across M at the models' linear shapes (tools/profile-gpu/gemm_kinds.py): "
         "Y[M,N] = X[M,K] W[N,K]^T, fp16/bf16 F.linear (cuBLAS), int8 torch._int_mm (cuBLASLt, "
         "int32 out), fp8 torch._scaled_mm (e4m3, tensor-wise scales, fp16 out), int4wo "
         "torch._weight_int4pack_mm (tinygemm, bf16 acts, group 128); CUDA-graph replay over "
         "operand sets exceeding 3x L2, median time per call; no steps"),
        dinfo, args.device,
        {"ms": ms, "kinds": kinds, "warmup": args.warmup, "reps": args.reps, "spin_up_s": args.spin_up_s,
         "command": pg.command_line("gemm_kinds.py", argv)},
        [{"name": n, "source": src, "shape": s} for n, src, s in models])
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)

    def flush():
        doc["elapsed_s"] = round(time.time() - t_start, 1)
        pg.write_json(out, doc)

    pg.spin_up(dev, args.spin_up_s, args.device, doc)

    paths = {k: pg.Gemm(k, dev) for k in kinds}
    runnable = {}  # (kind, M, N, K) -> M_run
    for (N, K), info in shapes:
        if args.time_budget_s and time.time() - t_start > args.time_budget_s:
            doc["skipped"].append({"what": "shape", "N": N, "K": K, "reason": "time budget spent"})
            continue
        ts = time.time()
        for M in ms:
            for k, g in paths.items():
                Mr, why = pg.gemm_runnable_M(g, M, N, K)
                if Mr is None:
                    doc["skipped"].append({"what": "gemm", "dtype": k, "M": M, "N": N, "K": K, "reason": why})
                    continue
                runnable[(k, M, N, K)] = Mr
                try:
                    r = bench(g, Mr, N, K, l2, args.warmup, args.reps)
                except Exception as e:  # noqa: BLE001
                    doc["skipped"].append({"what": "gemm", "dtype": k, "M": M, "N": N, "K": K,
                                           "reason": f"{type(e).__name__}: {str(e)[:300]}"})
                    pg.cleanup()
                    continue
                rec = {"model": info["model"], "op": "gemm", "phase": "decode" if M <= 256 else "prefill",
                       "dtype": k, "name": info["name"], "M": M, "N": N, "K": K, "M_run": Mr}
                rec.update(r)
                rec["tflops"] = 2 * M * N * K / (r["ms"] * 1e9)
                rec["gbps"] = g.bytes(Mr, N, K) / (r["ms"] * 1e6)
                if k == "int4wo" and g.int4:
                    rec.update({"int4_" + a: v for a, v in g.int4.items()})
                if len(info["models"]) > 1:
                    rec["models"] = info["models"]
                doc["ops"].append(rec)
            pg.cleanup()
        log(f"N={N} K={K} ({info['model']}.{info['name']}): {time.time() - ts:.1f} s, "
            f"total {time.time() - t_start:.0f} s")
        flush()
    doc["nvidia_smi"]["after"] = pg.nvidia_smi(args.device)
    flush()

    # Kernel names per kind and M for a few models' shapes (the tiles the libraries pick).
    from torch.profiler import profile, ProfilerActivity
    tk = time.time()
    kmodels = [m for m in args.kernel_models.split(",") if m]
    for (N, K), info in shapes:
        if not any(x.split(".")[0] in kmodels for x in info["models"]):
            continue
        for k, g in paths.items():
            for M in ms:
                if time.time() - tk > args.kernel_budget_s:
                    break
                Mr = runnable.get((k, M, N, K))
                if Mr is None:
                    continue
                try:
                    t = g.make(Mr, N, K)
                    g.run(t)
                    torch.cuda.synchronize()
                    with profile(activities=[ProfilerActivity.CUDA]) as prof:
                        g.run(t)
                        torch.cuda.synchronize()
                    ks = pg.cuda_kernels(prof, 240)
                    doc["kernels"].append({"model": info["model"], "name": info["name"], "dtype": k, "M": M,
                                           "M_run": Mr, "N": N, "K": K, "kernels": ks})
                    del t, prof
                except Exception as e:  # noqa: BLE001
                    doc["skipped"].append({"what": "kernels", "dtype": k, "M": M, "N": N, "K": K,
                                           "reason": f"{type(e).__name__}: {str(e)[:300]}"})
    flush()
    log(f"wrote {out} ({len(doc['ops'])} GEMMs, {len(doc['kernels'])} kernel lists, "
        f"{len(doc['skipped'])} skipped, {time.time() - t_start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
