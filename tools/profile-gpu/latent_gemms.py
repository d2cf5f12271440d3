#!/usr/bin/env python3
"""ltc latent-attention GEMM sweep: the absorbed MLA decode's three batched GEMMs across shapes.

The reference decode step (docs/performance-models.md, profile_gpu.mla_attention) multiplies each
sequence's heads against its cached latents with torch.matmul over a [B, L + 1, width] cache:

  score    [B, H, L+1] = q_lat [B, H, latent] @ c^T    (q_lat the bmm output seen through a transpose)
  rope     [B, H, L+1] = q_pe  [B, H, rope]   @ pe^T
  value    [B, H, latent] = p  [B, H, L+1]    @ c

L + 1 scores per row are not a multiple of 8 halves at the step's contexts, so cuBLAS runs its
alignment-1 kernels, whose choice follows the heads, the batch and the lengths. For every point of
heads x (latent, rope) x batch x context this times each GEMM (CUDA-graph replay over operand sets
exceeding 3 x L2, median per call, as gemm_kinds.py) and lists its kernels (torch.profiler).

Writes schema ltc-gpu-profile/1 with no steps: `ops` entries {"op": "gemm", "dtype": "fp16",
"layout": "latent_score" | "latent_rope" | "latent_value", "batch", "M" (heads), "N", "K"} in the
roofline's orientation (M rows of the activation side: the heads; N the output width; K the depth),
and `kernels` per op. --dry-run prints the plan without a GPU or PyTorch.
"""

import argparse
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import profile_gpu as pg  # noqa: E402


def build_parser():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--out", default="latent-gemms.json", help="output JSON (rewritten as it goes)")
    ap.add_argument("--heads", default="8,16,24,32,40,64,96,128", help="query heads H")
    ap.add_argument("--latents", default="512:64,256:32", help="latent width : rope width pairs")
    ap.add_argument("--batches", default="1,2,4,8,16,32,64,128,256", help="sequences B")
    ap.add_argument("--contexts", default="4096,512,2048,1024",
                    help="cached tokens L (the cache holds L + 1 rows); measured in this order")
    pg.add_run_options(ap, "points", warmup=3, reps=10)
    ap.add_argument("--dry-run", action="store_true", help="print the plan; needs no GPU")
    ap.add_argument("--summarize", metavar="FILE",
                    help="print a measured file's kernel families per layout and heads; needs no GPU")
    return ap


def plan(args):
    try:
        heads = pg.parse_ints(args.heads)
        batches = pg.parse_ints(args.batches)
        contexts = pg.parse_ints(args.contexts)
        latents = [tuple(int(v) for v in p.split(":")) for p in args.latents.split(",") if p]
    except ValueError as e:
        raise SystemExit(f"latent_gemms.py: {e} (lists of positive integers; --latents as 512:64,256:32)")
    if not heads or not batches or not contexts or not latents or min(heads + batches + contexts) < 1 \
            or any(len(p) != 2 or min(p) < 1 for p in latents):
        raise SystemExit("latent_gemms.py: --heads, --batches, --contexts need positive integers, "
                         "--latents pairs latent:rope of positive integers")
    points = [(L, lat, rp, H, B) for L in contexts for lat, rp in latents for H in heads for B in batches]
    return points


class LatentGemms:
    """One point's three GEMMs, shaped and strided as mla_attention runs them."""

    def __init__(self, dev, H, B, L, lat, rp):
        self.dev, self.H, self.B, self.n, self.lat, self.rp = dev, H, B, L + 1, lat, rp

    def bytes(self, layout):
        H, B, n, lat, rp = self.H, self.B, self.n, self.lat, self.rp
        return 2 * {"latent_score": B * (H * lat + n * lat + H * n),
                    "latent_rope": B * (H * rp + n * rp + H * n),
                    "latent_value": B * (H * n + n * lat + H * lat)}[layout]

    def make(self, layout):
        t, H, B, n, lat, rp, dev = pg.torch, self.H, self.B, self.n, self.lat, self.rp, self.dev
        h = t.float16
        if layout == "latent_score":
            ql = t.randn(H, B, lat, device=dev, dtype=h).transpose(0, 1)  # bmm over heads, transposed
            return (ql, t.randn(B, n, lat, device=dev, dtype=h).mul_(lat ** -0.5))
        if layout == "latent_rope":
            return (t.randn(B, H, rp, device=dev, dtype=h), t.randn(B, n, rp, device=dev, dtype=h).mul_(rp ** -0.5))
        return (t.softmax(t.randn(B, H, n, device=dev, dtype=t.float32), -1).to(h),
                t.randn(B, n, lat, device=dev, dtype=h))

    @staticmethod
    def run(layout, s):
        if layout == "latent_value":
            return pg.torch.matmul(s[0], s[1])
        return pg.torch.matmul(s[0], s[1].transpose(1, 2))

    def mnk(self, layout):
        """(M, N, K) in the roofline's orientation: M the heads, N the output width, K the depth."""
        return {"latent_score": (self.H, self.n, self.lat), "latent_rope": (self.H, self.n, self.rp),
                "latent_value": (self.H, self.lat, self.n)}[layout]


LAYOUTS = ["latent_score", "latent_rope", "latent_value"]


def kernel_family(name):
    """(family, tile rows, tile columns) of an alignment-1 kernel's name: cuBLAS's strided-batched
    small-N GEMV (gemmSN), CUTLASS 2.x WMMA or mma.sync (s1688) tiles, cuBLAS's own xmma tiles."""
    if "gemmSN" in name:
        return ("gemmSN", 0, 0)
    m = re.search(r"(wmma|s1688)\w*?_(\d+)x(\d+)_(?:\d+x\d+_)?(?:tn|nn|nt|tt)_align", name)
    if m:
        return (m.group(1), int(m.group(2)), int(m.group(3)))
    m = re.search(r"tilesize(\d+)x(\d+)", name)
    if m:
        return ("xmma", int(m.group(1)), int(m.group(2)))
    return ("other", 0, 0)


def summarize(path):
    """Per layout and heads: how often each kernel family ran the op (the kernel that took longest)
    and, for tiled kernels, the operand elements their tiles load (tile rows + columns per depth
    step, padded tiles) per SM and clock at the measured time; the gemmSN kernels' multiply-adds
    per SM and clock."""
    doc = json.load(open(path))
    dev = doc.get("device", {})
    sms, clock = dev.get("sm_count", 132), dev.get("clock_rate", 1980000) * 1e3
    rows = {}
    for o, k in zip(doc["ops"], doc["kernels"]):
        main = max(k["kernels"], key=lambda x: x["us"])
        fam, tm, tn = kernel_family(main["name"])
        B, M, N, K = o["batch"], o["M"], o["N"], o["K"]
        if tm:
            work = B * -(-N // tm) * -(-M // tn) * (tm + tn) * K
        else:
            work = B * M * N * K
        label = f"{fam} {tm}x{tn}" if tm else fam
        rate = work / (o["ms"] * 1e-3 * sms * clock)
        rows.setdefault((o["layout"], o["heads"]), {}).setdefault(label, []).append(rate)
    print(f"{path}: {dev.get('name', '?')}, {len(doc['ops'])} GEMMs")
    print("layout, heads: kernel family (times chosen, median elements or MACs per SM-clock)")
    for (layout, heads), fams in sorted(rows.items()):
        parts = [f"{f} ({len(v)}, {sorted(v)[len(v) // 2]:.2f})" for f, v in
                 sorted(fams.items(), key=lambda x: -len(x[1]))]
        print(f"{layout:13s} {heads:4d}: " + "; ".join(parts))


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.summarize:
        summarize(args.summarize)
        return 0
    points = plan(args)
    if args.dry_run:
        json.dump({"points": len(points), "gemms": 3 * len(points),
                   "first": [dict(zip(("context", "latent", "rope", "heads", "batch"), p)) for p in points[:4]]},
                  sys.stdout, indent=1)
        print()
        return 0
    t_start = time.time()
    dev, dinfo, l2 = pg.open_device(args.device)
    torch = pg.torch
    from torch.profiler import profile, ProfilerActivity
    log = lambda *a: print(*a, file=sys.stderr, flush=True)  # noqa: E731
    doc = pg.sweep_doc(
        ("The absorbed MLA decode's batched GEMMs (tools/profile-gpu/latent_gemms.py): torch.matmul "
         "of [B, H, width] queries against [B, L + 1, width] latent caches (scores, RoPE scores) and of "
         "[B, H, L + 1] probabilities against the latents (values), fp16; CUDA-graph replay over operand "
         "sets exceeding 3x L2, median time per call; each op's kernels; no steps"),
        dinfo, args.device,
        {"heads": args.heads, "latents": args.latents, "batches": args.batches, "contexts": args.contexts,
         "warmup": args.warmup, "reps": args.reps, "spin_up_s": args.spin_up_s,
         "command": pg.command_line("latent_gemms.py", argv)},
        [])
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)

    def flush():
        doc["elapsed_s"] = round(time.time() - t_start, 1)
        pg.write_json(out, doc)

    pg.spin_up(dev, args.spin_up_s, args.device, doc)

    last = time.time()
    for i, (L, lat, rp, H, B) in enumerate(points):
        if args.time_budget_s and time.time() - t_start > args.time_budget_s:
            doc["skipped"].append({"what": "point", "context": L, "latent": lat, "rope": rp, "heads": H,
                                   "batch": B, "reason": "time budget spent"})
            continue
        g = LatentGemms(dev, H, B, L, lat, rp)
        for layout in LAYOUTS:
            M, N, K = g.mnk(layout)
            rec = {"op": "gemm", "dtype": "fp16", "layout": layout, "name": layout, "batch": B, "M": M, "N": N,
                   "K": K, "heads": H, "context": L, "latent": lat, "rope": rp}
            try:
                r = pg.bench_sets(lambda: g.make(layout), lambda s: g.run(layout, s), g.bytes(layout), l2,
                                  args.warmup, args.reps)
                s = g.make(layout)
                g.run(layout, s)
                torch.cuda.synchronize()
                with profile(activities=[ProfilerActivity.CUDA]) as prof:
                    g.run(layout, s)
                    torch.cuda.synchronize()
                ks = pg.cuda_kernels(prof, 240)
                del s, prof
            except Exception as e:  # noqa: BLE001
                doc["skipped"].append({**rec, "reason": f"{type(e).__name__}: {str(e)[:300]}"})
                pg.cleanup()
                continue
            rec.update(r)
            rec["tflops"] = 2 * B * M * N * K / (r["ms"] * 1e9)
            doc["ops"].append(rec)
            doc["kernels"].append({"dtype": "fp16", "name": layout, "batch": B, "M": M, "N": N, "K": K,
                                   "kernels": ks})
        pg.cleanup()
        if time.time() - last > 20:
            log(f"{i + 1}/{len(points)} points, {time.time() - t_start:.0f} s")
            flush()
            last = time.time()
    doc["nvidia_smi"]["after"] = pg.nvidia_smi(args.device)
    flush()
    log(f"wrote {out} ({len(doc['ops'])} GEMMs, {len(doc['skipped'])} skipped, {time.time() - t_start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
