#!/usr/bin/env python3
"""ltc GPU profiler: measures the roofline's reference step and its operators on a CUDA GPU.

For each model config (an ltc built-in name or a Hugging Face config.json) it times, under
CUDA-graph replay with random weights:
  * the reference decoder step (issue #17) as a stack of layers: decode over a batch x context
    grid and prefill over (batch, sequence) points; time per layer = graph time / layers;
  * each operator class on its own: GEMMs at the step's shapes in fp16 / bf16 / int8 / fp8 /
    int4 weight-only, attention (decode and prefill SDPA), norms, RoPE, activation, residual add
    and KV-cache writes;
and writes one JSON file, schema "ltc-gpu-profile/1" (see README.md next to this file).

Needs PyTorch with CUDA to measure; --help and --dry-run (config parsing, the plan, memory
estimates) work without it.
"""

import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import time
import traceback
import zlib
from pathlib import Path

SCHEMA = "ltc-gpu-profile/1"
REPO = Path(__file__).resolve().parents[2]
MODEL_DIRS = [REPO / "configs" / "models", REPO / "configs" / "calibration" / "profile-models"]

try:  # guarded: --help / --dry-run work without PyTorch
    import torch
    import torch.nn.functional as F
except Exception as _e:  # pragma: no cover
    torch = None
    F = None
    _TORCH_IMPORT_ERROR = repr(_e)
else:
    _TORCH_IMPORT_ERROR = None

# --------------------------------------------------------------------------------------------
# Model configs
# --------------------------------------------------------------------------------------------

NON_GATED = {"opt", "phi", "falcon", "gpt2", "gpt_neox", "gptj", "bloom", "gpt_bigcode", "mpt",
             "starcoder2", "codegen", "gpt_neo"}
LAYERNORM = NON_GATED | {"stablelm", "persimmon"}
NO_ROTARY = {"opt", "gpt2", "bloom", "gpt_bigcode", "mpt", "gpt_neo"}  # learned positions / ALiBi
ALL_BIAS = {"opt", "phi", "gpt2", "gpt_neox", "bloom", "gpt_bigcode", "codegen", "starcoder2"}
QKV_BIAS_ONLY = {"qwen2", "qwen2_moe"}
POST_NORMS = {"gemma2", "gemma3", "gemma3_text"}


def _first(cfg, keys, default=None):
    for k in keys:
        if k in cfg and cfg[k] is not None:
            return cfg[k]
    return default


def resolve_model(spec):
    """(name, raw config dict, source) for a built-in name or a config.json path."""
    p = Path(spec)
    if p.suffix == ".json" and p.exists():
        name = p.stem if p.name != "config.json" else p.parent.name
        return name, json.loads(p.read_text()), str(p)
    for d in MODEL_DIRS:
        q = d / (spec + ".json")
        if q.exists():
            try:
                src = str(q.relative_to(REPO))
            except ValueError:
                src = str(q)
            return spec, json.loads(q.read_text()), src
    if p.is_dir() and (p / "config.json").exists():
        return p.name, json.loads((p / "config.json").read_text()), str(p / "config.json")
    raise SystemExit(f"model '{spec}': not a built-in name ({', '.join(str(d) for d in MODEL_DIRS)}) "
                     f"nor a config.json path")


def normalize(name, cfg):
    """The decoder-layer shape the reference step needs, from a HF-style config."""
    mt = str(cfg.get("model_type", "llama")).lower()
    H = int(_first(cfg, ["hidden_size", "n_embd", "d_model", "dim"]))
    L = int(_first(cfg, ["num_hidden_layers", "n_layer", "num_layers", "n_layers"]))
    nh = int(_first(cfg, ["num_attention_heads", "n_head", "n_heads", "num_heads"]))
    if mt == "falcon" and not cfg.get("new_decoder_architecture", False):
        nkv = 1 if cfg.get("multi_query", True) else nh
    else:
        nkv = int(_first(cfg, ["num_key_value_heads", "num_kv_heads", "n_head_kv", "multi_query_group_num"], nh))
    if cfg.get("multi_query") is True and mt != "falcon":
        nkv = 1
    hd = int(_first(cfg, ["head_dim", "kv_channels"], H // nh))
    ffn = _first(cfg, ["intermediate_size", "ffn_dim", "n_inner", "ffn_hidden_size"])
    ffn_implicit = ffn is None
    ffn = int(ffn) if ffn is not None else 4 * H
    gated = bool(cfg.get("ltc_gated", mt not in NON_GATED))
    act = str(_first(cfg, ["hidden_activation", "hidden_act", "activation_function"],
                     "silu" if gated else "gelu")).lower()
    norm = "layer_norm" if mt in LAYERNORM else "rms_norm"
    # biases
    if mt in ALL_BIAS:
        qkv_b = o_b = mlp_b = bool(_first(cfg, ["enable_bias", "use_bias", "bias"], True))
    elif mt in QKV_BIAS_ONLY:
        qkv_b, o_b, mlp_b = True, False, False
    elif mt == "falcon":
        qkv_b = o_b = mlp_b = bool(cfg.get("bias", False))
    else:
        qkv_b = o_b = bool(_first(cfg, ["attention_bias", "qkv_bias"], False))
        mlp_b = bool(cfg.get("mlp_bias", False))
    # positions
    if mt in NO_ROTARY or cfg.get("alibi", False) or cfg.get("position_embedding_type") == "absolute":
        rot_frac = 0.0
    elif "rotary_dim" in cfg and cfg["rotary_dim"]:
        rot_frac = float(cfg["rotary_dim"]) / hd
    else:
        rot_frac = float(_first(cfg, ["partial_rotary_factor", "rotary_pct"], 1.0))
    rot = int(hd * rot_frac) // 2 * 2
    # parallel attention + MLP
    parallel, par_norms = False, 0
    if mt in ("phi", "gptj", "codegen"):
        parallel, par_norms = True, 1
    elif mt == "falcon":
        if cfg.get("new_decoder_architecture", False):
            parallel, par_norms = True, 2
        elif cfg.get("parallel_attn", True):
            parallel, par_norms = True, 1
    elif mt == "gpt_neox" and cfg.get("use_parallel_residual", True):
        parallel, par_norms = True, 2
    parallel = bool(cfg.get("ltc_parallel", parallel))
    post_norms = mt in POST_NORMS
    notes = []
    if mt == "bloom" or cfg.get("alibi", False):
        notes.append("ALiBi bias not applied (plain SDPA)")
    if cfg.get("attn_logit_softcapping"):
        notes.append("attention soft-capping not part of the reference step")
    moe, mla, window, kind_note = moe_mla_window(mt, cfg, L, ffn)
    if kind_note:
        notes.append(kind_note)
    if mla:
        # Every head has its own query and key/value (from the latent); a query head is
        # nope + rope wide, RoPE on its rope part.
        nkv, hd, rot = nh, mla["qk_nope"] + mla["qk_rope"], mla["qk_rope"]
    return {
        "model_type": mt, "hidden": H, "num_layers": L, "heads": nh, "kv_heads": nkv, "head_dim": hd,
        "ffn": ffn, "ffn_implicit": ffn_implicit, "gated": gated, "act": act, "norm": norm,
        "qkv_bias": qkv_b, "o_bias": o_b, "mlp_bias": mlp_b, "rotary_dim": rot,
        "parallel": parallel, "parallel_norms": par_norms if parallel else 0, "post_norms": post_norms,
        "qkv_out": (nh + 2 * nkv) * hd, "notes": notes,
        "moe": moe, "mla": mla, "window": window,
    }


def moe_mla_window(mt, cfg, L, ffn):
    """The MoE, latent-attention and sliding-window settings of the layer kind the step stack
    measures: of the kinds (MoE or dense FFN, window or full attention) a model's layers have,
    the most common (the first on a tie), as ltc's step graph calls its main layer kind
    (model/llm/model_config.cpp reads the same fields)."""
    E = int(_first(cfg, ["num_local_experts", "num_experts", "n_routed_experts"], 0) or 0)
    moe = None
    is_moe = [False] * L
    if E > 1:
        k = int(cfg["num_experts_per_tok"])
        expert_ffn = int(ffn if mt in ("mixtral", "olmoe") else cfg["moe_intermediate_size"])
        shared, gate = 0, False
        if mt == "qwen2_moe":
            shared = int(cfg.get("shared_expert_intermediate_size") or 0)
            gate = shared > 0
        elif mt in ("deepseek_v2", "deepseek_v3"):
            shared = int(cfg.get("n_shared_experts") or 0) * expert_ffn
        first = int(cfg.get("first_k_dense_replace") or 0)
        if mt in ("qwen2_moe", "qwen3_moe"):
            step, dense = int(cfg.get("decoder_sparse_step") or 1), set(cfg.get("mlp_only_layers") or [])
            is_moe = [l not in dense and (l + 1) % step == 0 for l in range(L)]
        else:
            freq = int(cfg.get("moe_layer_freq") or 1)
            is_moe = [l >= first and l % freq == 0 for l in range(L)]
        moe = {"experts": E, "top_k": k, "expert_ffn": expert_ffn, "shared_ffn": shared,
               "shared_gate": gate, "norm_topk": mt == "mixtral" or bool(cfg.get("norm_topk_prob", False)),
               "scoring": str(cfg.get("scoring_func") or "softmax")}
    mla = None
    if cfg.get("kv_lora_rank"):
        mla = {"kv_lora": int(cfg["kv_lora_rank"]), "q_lora": int(cfg.get("q_lora_rank") or 0),
               "qk_nope": int(cfg["qk_nope_head_dim"]), "qk_rope": int(cfg["qk_rope_head_dim"]),
               # MiniCPM3's config has no v_head_dim: its attention takes hidden / heads.
               "v_head": int(cfg.get("v_head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"])}
    W = cfg.get("sliding_window")
    sliding = [False] * L
    if isinstance(W, int) and not isinstance(W, bool) and W > 0 and \
            not ("use_sliding_window" in cfg and not cfg["use_sliding_window"]):
        if cfg.get("layer_types"):
            sliding = [t == "sliding_attention" for t in cfg["layer_types"]]
        elif mt == "gemma2":
            sliding = [l % 2 == 0 for l in range(L)]
        elif cfg.get("sliding_window_pattern"):
            p = int(cfg["sliding_window_pattern"])
            sliding = [(l + 1) % p != 0 for l in range(L)]
        elif "use_sliding_window" in cfg:
            sliding = [l >= int(cfg.get("max_window_layers") or 0) for l in range(L)]
        else:
            sliding = [True] * L
    kinds = []
    for l in range(L):
        kind = (is_moe[l], sliding[l])
        for e in kinds:
            if e[0] == kind:
                e[1] += 1
                break
        else:
            kinds.append([kind, 1])
    main = max(kinds, key=lambda e: e[1])[0] if kinds else (False, False)  # the first on ties
    note = None
    if len(kinds) > 1:
        note = (f"layers of {len(kinds)} kinds: the stack measures the most common one "
                f"({'MoE' if main[0] else 'dense'} FFN, {'sliding window' if main[1] else 'full attention'}, "
                f"{max(e[1] for e in kinds)} of {L} layers)")
    return (moe if main[0] else None), mla, (int(W) if main[1] else 0), note


def layer_weight_elems(s):
    H, F_ = s["hidden"], s["ffn"]
    if s.get("mla"):
        a, nh = s["mla"], s["heads"]
        q_out = nh * (a["qk_nope"] + a["qk_rope"])
        n = (H * a["q_lora"] + a["q_lora"] * q_out if a["q_lora"] else H * q_out)
        n += H * (a["kv_lora"] + a["qk_rope"]) + a["kv_lora"] * nh * (a["qk_nope"] + a["v_head"])
        n += nh * a["v_head"] * H
    else:
        n = s["qkv_out"] * H + H * s["heads"] * s["head_dim"]
    if s.get("moe"):
        e = s["moe"]
        n += H * e["experts"] + 3 * H * (e["experts"] * e["expert_ffn"] + e["shared_ffn"])
    else:
        n += (2 * F_ if s["gated"] else F_) * H + H * F_
    return n


def gemm_shapes(s):
    """(name, N, K) of the step's linear layers (Y[M,N] = X[M,K] W[N,K]^T)."""
    H, F_ = s["hidden"], s["ffn"]
    return [("qkv", s["qkv_out"], H), ("o", H, s["heads"] * s["head_dim"]),
            ("gate_up" if s["gated"] else "up", 2 * F_ if s["gated"] else F_, H), ("down", H, F_)]


def step_bytes(s, B, T, kv_len, layers, esize=2):
    """Rough device memory of a step stack: weights + KV caches + activations (+ margin)."""
    w = layer_weight_elems(s) * esize
    if s.get("window") and T == 1:
        kv_len = min(kv_len, s["window"])
    if s.get("mla"):
        kv = B * kv_len * (s["mla"]["kv_lora"] + s["mla"]["qk_rope"]) * esize
    else:
        kv = 2 * B * s["kv_heads"] * kv_len * s["head_dim"] * esize
    M = B * T
    ffn = s["ffn"]
    if s.get("moe"):
        e = s["moe"]
        ffn = e["top_k"] * e["expert_ffn"] + e["shared_ffn"] + e["experts"]
    act = M * (s["qkv_out"] + 3 * ffn + 6 * s["hidden"] + 2 * s["heads"] * s["head_dim"]) * esize
    if s.get("moe"):
        act += 4 * M * s["moe"]["top_k"] * s["hidden"] * esize  # dispatched rows, expert outputs
    if s.get("mla") and T > 1:
        act += 2 * M * s["heads"] * (s["head_dim"] + s["mla"]["v_head"]) * esize
    if s.get("mla") and T == 1:
        act += 4 * B * s["heads"] * kv_len * 4  # fp32 scores and probabilities
    if s.get("window") and T > s["window"]:
        act += T * T  # the banded mask (bool)
    return layers * (w + kv + act)


# --------------------------------------------------------------------------------------------
# Timing helpers
# --------------------------------------------------------------------------------------------

def _stats(ts):
    ts = sorted(ts)
    n = len(ts)
    return {"median": ts[n // 2] if n % 2 else 0.5 * (ts[n // 2 - 1] + ts[n // 2]),
            "min": ts[0], "p90": ts[min(n - 1, int(round(0.9 * (n - 1))))]}


def point_seed(model, phase, batch, n):
    """The RNG seed of one grid point's weights, cache and input: the same on every run and GPU
    whatever was measured before it, so its routing can be reproduced."""
    return zlib.crc32(f"{model}:{phase}:{batch}:{n}".encode())


def step_routing(s, st):
    """Tokens each routed expert got in each layer of the stack `st` (its static input and
    weights: the routing of every replay), from one eager forward."""
    s["_routing"] = []
    try:
        with torch.no_grad():
            st()
        torch.cuda.synchronize()
        return [c.tolist() for c in s["_routing"]]
    finally:
        s["_routing"] = None


def capture(fn, warm=2):
    """Capture fn() into a CUDA graph (after warm-up runs on a side stream)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(warm):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    torch.cuda.synchronize()
    return g


def time_graph(g, warmup, reps):
    for _ in range(warmup):
        g.replay()
    torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for a, b in ev:
        a.record()
        g.replay()
        b.record()
    torch.cuda.synchronize()
    return _stats([a.elapsed_time(b) for a, b in ev])


def cuda_kernels(prof, width):
    """The CUDA kernels a torch.profiler run recorded: [{"name" (first `width` chars), "us"}]."""
    ks = []
    for e in prof.events():
        dt = getattr(e, "device_type", None)
        if dt is not None and "CUDA" in str(dt) and getattr(e, "device_time", None) is not None:
            ks.append({"name": e.name[:width], "us": round(float(e.device_time), 3)})
    return ks


def free_bytes():
    f, _t = torch.cuda.mem_get_info()
    return f


def cleanup():
    import gc
    gc.collect()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()


def where(e):
    """The line of this program where exception `e` left it (its innermost frame here)."""
    frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == __file__]
    return f" (at line {frames[-1].lineno}: {frames[-1].line})" if frames else ""


def is_oom(e):
    return isinstance(e, torch.cuda.OutOfMemoryError) or "out of memory" in str(e).lower()


# --------------------------------------------------------------------------------------------
# The reference step
# --------------------------------------------------------------------------------------------

def act_fn(name):
    if name in ("silu", "swish"):
        return F.silu
    if name in ("relu",):
        return F.relu
    if name in ("gelu_new", "gelu_pytorch_tanh", "gelu_fast", "gelu_tanh", "gelu_approx"):
        return lambda x: F.gelu(x, approximate="tanh")
    if name.startswith("gelu"):
        return F.gelu
    raise SystemExit(f"unknown activation '{name}'")


def rand_w(shape, dtype, dev, fan_in):
    return torch.randn(shape, device=dev, dtype=torch.float32).mul_(fan_in ** -0.5).to(dtype)


def make_layer(s, dtype, dev):
    H, nh, hd = s["hidden"], s["heads"], s["head_dim"]
    w = {}

    def norm_w(key):
        w[key + "_w"] = torch.ones(H, device=dev, dtype=dtype)
        w[key + "_b"] = torch.zeros(H, device=dev, dtype=dtype) if s["norm"] == "layer_norm" else None

    norm_w("n1")
    if not s["parallel"] or s["parallel_norms"] == 2:
        norm_w("n2")
    if s["post_norms"]:
        norm_w("pa")
        norm_w("pf")
    if s.get("mla"):
        make_mla(s, w, dtype, dev)
    else:
        w["qkv"] = rand_w((s["qkv_out"], H), dtype, dev, H)
        w["qkv_b"] = torch.zeros(s["qkv_out"], device=dev, dtype=dtype) if s["qkv_bias"] else None
        w["o"] = rand_w((H, nh * hd), dtype, dev, nh * hd)
        w["o_b"] = torch.zeros(H, device=dev, dtype=dtype) if s["o_bias"] else None
    if s.get("moe"):
        make_moe(s, w, dtype, dev)
        return w
    up_n = 2 * s["ffn"] if s["gated"] else s["ffn"]
    w["up"] = rand_w((up_n, H), dtype, dev, H)
    w["up_b"] = torch.zeros(up_n, device=dev, dtype=dtype) if s["mlp_bias"] else None
    w["down"] = rand_w((H, s["ffn"]), dtype, dev, s["ffn"])
    w["down_b"] = torch.zeros(H, device=dev, dtype=dtype) if s["mlp_bias"] else None
    return w


def make_mla(s, w, dtype, dev):
    """Latent attention weights (DeepSeek-V2 names): the query GEMM and kv_a_proj_with_mqa as one
    weight (N concatenated), the latent's RMSNorm, W_UK / W_UV per head (absorbed, decode) and
    kv_b_proj (prefill), o_proj."""
    H, nh, a = s["hidden"], s["heads"], s["mla"]
    q_out = nh * (a["qk_nope"] + a["qk_rope"])
    kva = a["kv_lora"] + a["qk_rope"]
    if a["q_lora"]:
        w["qa_kva"] = rand_w((a["q_lora"] + kva, H), dtype, dev, H)
        w["qa_norm"] = torch.ones(a["q_lora"], device=dev, dtype=dtype)
        w["q_b"] = rand_w((q_out, a["q_lora"]), dtype, dev, a["q_lora"])
    else:
        w["qa_kva"] = rand_w((q_out + kva, H), dtype, dev, H)
    w["kv_norm"] = torch.ones(a["kv_lora"], device=dev, dtype=dtype)
    w["kv_b"] = rand_w((nh * (a["qk_nope"] + a["v_head"]), a["kv_lora"]), dtype, dev, a["kv_lora"])
    kvb = w["kv_b"].view(nh, a["qk_nope"] + a["v_head"], a["kv_lora"])
    w["w_uk"] = kvb[:, :a["qk_nope"]].contiguous()                  # [nh, nope, kv_lora]
    w["w_uv"] = kvb[:, a["qk_nope"]:].transpose(1, 2).contiguous()  # [nh, kv_lora, v]
    w["o"] = rand_w((H, nh * a["v_head"]), dtype, dev, nh * a["v_head"])


def make_moe(s, w, dtype, dev):
    """Router [E, H]; the experts' gate+up [E, 2F, H] and down [E, H, F] weights stacked for
    torch._grouped_mm (in s["_expert_dtype"]); the shared expert's fused gate+up and down (+ its
    gate)."""
    H, e = s["hidden"], s["moe"]
    E, Fe = e["experts"], e["expert_ffn"]
    w["router"] = rand_w((E, H), dtype, dev, H)
    w["e_gate_up"] = rand_w((E, 2 * Fe, H), s["_expert_dtype"], dev, H)
    w["e_down"] = rand_w((E, H, Fe), s["_expert_dtype"], dev, Fe)
    if e["shared_ffn"]:
        w["s_gate_up"] = rand_w((2 * e["shared_ffn"], H), dtype, dev, H)
        w["s_down"] = rand_w((H, e["shared_ffn"]), dtype, dev, e["shared_ffn"])
        w["s_gate"] = rand_w((1, H), dtype, dev, H) if e["shared_gate"] else None


def apply_norm(s, x, w, key):
    if s["norm"] == "layer_norm":
        return F.layer_norm(x, (x.shape[-1],), w[key + "_w"], w[key + "_b"], 1e-5)
    return F.rms_norm(x, (x.shape[-1],), w[key + "_w"], 1e-6)


def rope(x, cos, sin, rot):
    hd = x.shape[-1]
    xr = x if rot == hd else x[..., :rot]
    x1, x2 = xr[..., : rot // 2], xr[..., rot // 2:]
    out = xr * cos + torch.cat((-x2, x1), dim=-1) * sin
    return out if rot == hd else torch.cat((out, x[..., rot:]), dim=-1)


def rope_tables(T, pos, rot, dtype, dev, theta=10000.0):
    inv = 1.0 / (theta ** (torch.arange(0, rot, 2, device=dev, dtype=torch.float32) / rot))
    t = torch.arange(pos, pos + T, device=dev, dtype=torch.float32)
    fr = torch.outer(t, inv)
    emb = torch.cat((fr, fr), dim=-1)
    return emb.cos().to(dtype), emb.sin().to(dtype)


SDPA_GQA = None


def sdpa(q, k, v, causal):
    """F.scaled_dot_product_attention with enable_gqa for grouped KV heads (repeat fallback)."""
    global SDPA_GQA
    if q.shape[1] != k.shape[1]:
        if SDPA_GQA is None:
            try:
                F.scaled_dot_product_attention(q[:1, :, :1], k[:1, :, :1], v[:1, :, :1], enable_gqa=True)
                SDPA_GQA = True
            except TypeError:
                SDPA_GQA = False
        if SDPA_GQA:
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
        r = q.shape[1] // k.shape[1]
        k, v = k.repeat_interleave(r, dim=1), v.repeat_interleave(r, dim=1)
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


def layer_forward(s, x, w, kc, vc, pos, cos, sin, causal, mask=None):
    """One reference decoder layer. x: [B, T, H]; kc/vc: [B, nkv, Lmax, hd] with the new K/V at
    pos (a sliding window's rolling buffer: Lmax = min(L + 1, W) slots, the new token in the
    last; `mask`: the banded causal mask of a prefill longer than the window). MLA: kc/vc are the
    latent [B, Lmax, kv_lora] and RoPE-key [B, Lmax, rope] caches."""
    B, T, _ = x.shape
    nh, nkv, hd = s["heads"], s["kv_heads"], s["head_dim"]
    h = apply_norm(s, x, w, "n1")
    if s.get("mla"):
        o = mla_attention(s, h, w, kc, vc, pos, cos, sin, causal)
    else:
        qkv = F.linear(h, w["qkv"], w["qkv_b"])
        q, k, v = qkv.split([nh * hd, nkv * hd, nkv * hd], dim=-1)
        q = q.view(B, T, nh, hd).transpose(1, 2)
        k = k.view(B, T, nkv, hd).transpose(1, 2)
        v = v.view(B, T, nkv, hd).transpose(1, 2)
        if s["rotary_dim"]:
            q = rope(q, cos, sin, s["rotary_dim"])
            k = rope(k, cos, sin, s["rotary_dim"])
        kc[:, :, pos:pos + T].copy_(k)
        vc[:, :, pos:pos + T].copy_(v)
        if mask is not None:
            a = F.scaled_dot_product_attention(q, repeat_kv(kc[:, :, :pos + T], nh),
                                               repeat_kv(vc[:, :, :pos + T], nh), attn_mask=mask)
        else:
            a = sdpa(q, kc[:, :, :pos + T], vc[:, :, :pos + T], causal)
        a = a.transpose(1, 2).reshape(B, T, nh * hd)
        o = F.linear(a, w["o"], w["o_b"])
    if s["post_norms"]:
        o = apply_norm(s, o, w, "pa")
    if s["parallel"]:
        h2 = h if s["parallel_norms"] == 1 else apply_norm(s, x, w, "n2")
    else:
        x = x + o
        h2 = apply_norm(s, x, w, "n2")
    if s.get("moe"):
        d = moe_ffn(s, h2, w)
    else:
        gu = F.linear(h2, w["up"], w["up_b"])
        if s["gated"]:
            g, u = gu.chunk(2, dim=-1)
            m = s["_act"](g) * u
        else:
            m = s["_act"](gu)
        d = F.linear(m, w["down"], w["down_b"])
    if s["post_norms"]:
        d = apply_norm(s, d, w, "pf")
    return x + o + d if s["parallel"] else x + d


def repeat_kv(t, heads):
    """K or V [B, nkv, L, hd] repeated to `heads` (SDPA with an explicit mask takes no GQA)."""
    r = heads // t.shape[1]
    return t if r == 1 else t.repeat_interleave(r, dim=1)


def mla_attention(s, h, w, c_cache, pe_cache, pos, cos, sin, causal):
    """DeepSeek-V2 attention (docs/performance-models.md): absorbed in decode, naive in prefill;
    the latent and the RoPE key are cached."""
    B, T, _ = h.shape
    nh, a = s["heads"], s["mla"]
    nope, rp, kvl, vh = a["qk_nope"], a["qk_rope"], a["kv_lora"], a["v_head"]
    qa = F.linear(h, w["qa_kva"])
    if a["q_lora"]:
        q_lat, ckv, kpe = qa.split([a["q_lora"], kvl, rp], dim=-1)
        q = F.linear(F.rms_norm(q_lat, (a["q_lora"],), w["qa_norm"], 1e-6), w["q_b"])
    else:
        q, ckv, kpe = qa.split([nh * (nope + rp), kvl, rp], dim=-1)
    ckv = F.rms_norm(ckv, (kvl,), w["kv_norm"], 1e-6)
    q = q.view(B, T, nh, nope + rp).transpose(1, 2)           # [B, nh, T, nope + rope]
    q_nope, q_pe = q.split([nope, rp], dim=-1)
    q_pe = rope(q_pe, cos, sin, rp)
    kpe = rope(kpe.view(B, 1, T, rp), cos, sin, rp)            # [B, 1, T, rope]
    c_cache[:, pos:pos + T].copy_(ckv)
    pe_cache[:, pos:pos + T].copy_(kpe.view(B, T, rp))
    scale = (nope + rp) ** -0.5
    if not causal:
        # Absorbed: q_nope through W_UK into the latent space, scores against the cached latents
        # (+ the RoPE part), values from the latents, then W_UV per head.
        ql = torch.bmm(q_nope.reshape(B, nh, nope).transpose(0, 1), w["w_uk"])  # [nh, B, kvl]
        ql = ql.transpose(0, 1)                                                 # [B, nh, kvl]
        c, pe = c_cache[:, :pos + T], pe_cache[:, :pos + T]
        sc = torch.matmul(ql, c.transpose(1, 2)) + torch.matmul(q_pe.reshape(B, nh, rp), pe.transpose(1, 2))
        p = torch.softmax(sc * scale, dim=-1, dtype=torch.float32).to(h.dtype)
        ol = torch.matmul(p, c)                                                 # [B, nh, kvl]
        o = torch.bmm(ol.transpose(0, 1), w["w_uv"]).transpose(0, 1)            # [B, nh, v]
        o = o.reshape(B, T, nh * vh)
    else:
        kv = F.linear(ckv, w["kv_b"]).view(B, T, nh, nope + vh).transpose(1, 2)
        k_nope, v = kv.split([nope, vh], dim=-1)
        k = torch.cat((k_nope, kpe.expand(B, nh, T, rp)), dim=-1)
        qf = torch.cat((q_nope, q_pe), dim=-1)
        o = F.scaled_dot_product_attention(qf, k, v, is_causal=True, scale=scale)
        o = o.transpose(1, 2).reshape(B, T, nh * vh)
    return F.linear(o, w["o"])


def grouped_mm(x, wt, offs):
    """Y[g rows] = X[g rows] @ W[g]^T for each group g of rows (offs: int32 group ends) with
    torch._grouped_mm; wt is W transposed ([E, K, N] view of [E, N, K])."""
    return torch._grouped_mm(x, wt, offs=offs)


def moe_ffn(s, h2, w):
    """The MoE FFN reference step (docs/performance-models.md): router, top-k, dispatch by
    argsort / a scatter-add count / cumsum and a row gather, grouped gate+up and down GEMMs, combine by
    index_add_; the shared expert on every token. Groups are padded to s["_moe_align"] rows
    where torch._grouped_mm needs aligned groups (rows of a pad are zeros)."""
    B, T, H = h2.shape
    e = s["moe"]
    E, k, Fe = e["experts"], e["top_k"], e["expert_ffn"]
    xs = h2.reshape(B * T, H)
    M = B * T
    logits = F.linear(xs, w["router"])
    scores = torch.sigmoid(logits.float()) if e["scoring"] == "sigmoid" else torch.softmax(logits, -1, dtype=torch.float32)
    tw, ti = torch.topk(scores, k, dim=-1)
    if e["norm_topk"]:
        tw = tw / tw.sum(-1, keepdim=True)
    flat = ti.reshape(-1)
    order = torch.argsort(flat)
    # Tokens per expert without a host sync (torch.bincount sizes its output on the host).
    counts = torch.zeros(E, device=xs.device, dtype=flat.dtype).scatter_add_(0, flat, torch.ones_like(flat))
    if s.get("_routing") is not None:  # an eager forward that records the routing (step_routing)
        s["_routing"].append(counts)
    tok = order // k
    ed = s["_expert_dtype"]
    align = s["_moe_align"]
    if align > 1:
        padded = (counts + align - 1) // align * align
        ends = torch.cumsum(padded, 0)
        starts = ends - padded
        first = torch.cumsum(counts, 0) - counts
        se = flat[order]
        dest = torch.arange(M * k, device=xs.device) - first[se] + starts[se]
        xg = torch.zeros(M * k + E * align, H, device=xs.device, dtype=ed)
        xg[dest] = xs[tok].to(ed)
        offs = ends.to(torch.int32)
    else:
        dest = None
        xg = xs[tok].to(ed)
        offs = torch.cumsum(counts, 0).to(torch.int32)
    gu = grouped_mm(xg, w["e_gate_up"].transpose(-2, -1), offs)
    g, u = gu.chunk(2, dim=-1)
    m = s["_act"](g) * u
    y = grouped_mm(m, w["e_down"].transpose(-2, -1), offs)
    if dest is not None:
        y = y[dest]
    y = y.to(xs.dtype) * tw.reshape(-1)[order].unsqueeze(-1).to(xs.dtype)
    out = torch.zeros_like(xs).index_add_(0, tok, y)
    if e["shared_ffn"]:
        sg, su = F.linear(xs, w["s_gate_up"]).chunk(2, dim=-1)
        sh = F.linear(s["_act"](sg) * su, w["s_down"])
        if w.get("s_gate") is not None:
            sh = sh * torch.sigmoid(F.linear(xs, w["s_gate"]))
        out = out + sh
    return out.view(B, T, H)


def moe_setup(s, dtype, dev):
    """The dtype and group alignment torch._grouped_mm takes on this GPU and PyTorch, correct and
    capturable in a CUDA graph: the step dtype, else bf16 (recorded per step as expert_dtype);
    unaligned groups, else groups padded to 16 rows. Raises SystemExit naming what is missing."""
    if not hasattr(torch, "_grouped_mm"):
        raise SystemExit("MoE reference step: this PyTorch has no torch._grouped_mm (PyTorch >= 2.8 needed)")
    last = None
    for ed in (dtype, torch.bfloat16):
        for align in (1, 16):
            try:
                E, Hh, N = 4, 64, 32
                x = torch.randn(24 if align == 1 else 64, Hh, device=dev, dtype=ed)
                wt = torch.randn(E, N, Hh, device=dev, dtype=ed).transpose(-2, -1)
                ends = [3, 3, 10, 24] if align == 1 else [16, 16, 32, 64]
                offs = torch.tensor(ends, device=dev, dtype=torch.int32)
                y = torch._grouped_mm(x, wt, offs=offs)
                ref = x[3:10].float() @ wt[2].float() if align == 1 else x[16:32].float() @ wt[2].float()
                got = y[3:10].float() if align == 1 else y[16:32].float()
                if not torch.allclose(got, ref, rtol=2e-2, atol=2e-2):
                    last = "wrong result"
                    continue
                # The step is replayed from a CUDA graph: a kernel path that reads the group
                # offsets on the host (PyTorch's fallback outside the CUTLASS dtypes) cannot be
                # captured, so the configuration must capture and replay to the same result.
                held = {}
                g = capture(lambda: held.__setitem__("y", torch._grouped_mm(x, wt, offs=offs)), warm=1)
                held["y"].zero_()
                g.replay()
                torch.cuda.synchronize()
                got = held["y"][3:10].float() if align == 1 else held["y"][16:32].float()
                if not torch.allclose(got, ref, rtol=2e-2, atol=2e-2):
                    last = "wrong result when replayed from a CUDA graph"
                    continue
                s["_expert_dtype"], s["_moe_align"] = ed, align
                return
            except Exception as ex:  # noqa: BLE001
                last = f"{type(ex).__name__}: {str(ex)[:200]}"
    raise SystemExit(f"MoE reference step: torch._grouped_mm fails on this GPU ({last})")


class StepStack:
    """layers x (weights, KV cache) and the static input of one grid point."""

    def __init__(self, s, phase, B, T_or_L, layers, dtype, dev):
        self.s, self.layers = s, layers
        W = s.get("window") or 0
        self.mask = None
        if phase == "decode":
            L = T_or_L
            self.T, self.pos, lmax, self.causal = 1, L, L + 1, False
            if W and lmax > W:  # the rolling buffer: W slots, the new token written in place
                self.pos, lmax = W - 1, W
        else:
            self.T, self.pos, lmax, self.causal = T_or_L, 0, T_or_L, True
            if W and T_or_L > W:
                i = torch.arange(T_or_L, device=dev)
                d = i[:, None] - i[None, :]
                self.mask = (d >= 0) & (d < W)
        self.w = [make_layer(s, dtype, dev) for _ in range(layers)]
        if s.get("mla"):
            shp_c = (B, lmax, s["mla"]["kv_lora"])
            shp_v = (B, lmax, s["mla"]["qk_rope"])
        else:
            shp_c = shp_v = (B, s["kv_heads"], lmax, s["head_dim"])
        self.kc = [torch.empty(shp_c, device=dev, dtype=dtype).normal_() for _ in range(layers)]
        self.vc = [torch.empty(shp_v, device=dev, dtype=dtype).normal_() for _ in range(layers)]
        self.x = torch.randn((B, self.T, s["hidden"]), device=dev, dtype=dtype)
        rot = s["rotary_dim"]
        # RoPE angles of the true positions (a rolling buffer's slot is not the position).
        true_pos = T_or_L if phase == "decode" else 0
        self.cos, self.sin = rope_tables(self.T, true_pos, rot, dtype, dev) if rot else (None, None)

    def __call__(self):
        x = self.x
        for i in range(self.layers):
            x = layer_forward(self.s, x, self.w[i], self.kc[i], self.vc[i], self.pos, self.cos, self.sin,
                              self.causal, self.mask)
        return x


# --------------------------------------------------------------------------------------------
# Operators on their own
# --------------------------------------------------------------------------------------------

def n_sets_for(bytes_per_set, l2):
    """Independent operand sets cycled inside one graph so repeats do not hit in L2."""
    return int(max(1, min(16, math.ceil(3 * l2 / max(1, bytes_per_set)))))


def bench_sets(make_set, run, bytes_per_set, l2, warmup, reps, min_calls=4):
    """Build n operand sets, capture R >= min_calls calls cycling through them, time/call."""
    n = n_sets_for(bytes_per_set, l2)
    sets = [make_set() for _ in range(n)]
    R = max(n, min_calls)

    def fn():
        for i in range(R):
            run(sets[i % n])

    g = capture(fn)
    st = time_graph(g, warmup, reps)
    del g, sets
    return {"ms": st["median"] / R, "ms_min": st["min"] / R, "ms_p90": st["p90"] / R,
            "operand_sets": n, "calls_per_graph": R}


class Gemm:
    """Y[M,N] = X[M,K] W[N,K]^T in one dtype path; .run(set) for the graph."""

    def __init__(self, dtype_name, dev):
        self.d, self.dev = dtype_name, dev
        self.int4 = None

    def bytes(self, M, N, K):
        wb = {"fp16": 2, "bf16": 2, "int8": 1, "fp8": 1, "int4wo": 0.5}[self.d]
        ab = {"fp16": 2, "bf16": 2, "int8": 1, "fp8": 1, "int4wo": 2}[self.d]
        ob = {"int8": 4}.get(self.d, 2)
        return int(N * K * wb + M * K * ab + M * N * ob)

    def make(self, M, N, K):
        dev = self.dev
        if self.d in ("fp16", "bf16"):
            dt = torch.float16 if self.d == "fp16" else torch.bfloat16
            return (torch.randn(M, K, device=dev, dtype=dt), torch.randn(N, K, device=dev, dtype=dt).mul_(K ** -0.5))
        if self.d == "int8":
            return (torch.randint(-8, 8, (M, K), device=dev, dtype=torch.int8),
                    torch.randint(-8, 8, (N, K), device=dev, dtype=torch.int8))
        if self.d == "fp8":
            f8 = torch.float8_e4m3fn
            one = torch.ones((), device=dev, dtype=torch.float32)
            return (torch.randn(M, K, device=dev).to(f8), torch.randn(N, K, device=dev).mul_(K ** -0.5).to(f8),
                    one, one.clone())
        if self.d == "int4wo":
            # group size and inner k tiles: the largest the kernel accepts for this K
            gs = next((g for g in (128, 64, 32) if K % g == 0), 128)
            kt = next((t for t in (8, 4, 2) if K % (t * 16) == 0), 8)
            self.int4 = {"group_size": gs, "inner_k_tiles": kt}
            q = torch.randint(0, 16, (N, K), device=dev, dtype=torch.int32)
            packed = ((q[:, ::2] << 4) | q[:, 1::2]).to(torch.uint8)
            wp = torch._convert_weight_to_int4pack(packed, kt)
            sz = torch.empty((K // gs, N, 2), device=dev, dtype=torch.bfloat16)
            sz[..., 0].fill_(0.01)
            sz[..., 1].fill_(0.0)
            return (torch.randn(M, K, device=dev, dtype=torch.bfloat16), wp, gs, sz)
        raise ValueError(self.d)

    def run(self, t):
        if self.d in ("fp16", "bf16"):
            return F.linear(t[0], t[1])
        if self.d == "int8":
            return torch._int_mm(t[0], t[1].t())
        if self.d == "fp8":
            r = torch._scaled_mm(t[0], t[1].t(), t[2], t[3], out_dtype=torch.float16)
            return r[0] if isinstance(r, tuple) else r
        if self.d == "int4wo":
            return torch._weight_int4pack_mm(t[0], t[1], t[2], t[3])


GEMM_DTYPES = ["fp16", "bf16", "int8", "fp8", "int4wo"]


def gemm_runnable_M(g, M, N, K):
    """Smallest M' >= M the path accepts (real kernels pad small M; int8 needs M > 16 on some
    builds, fp8 multiples of 16). Returns (M', None) or (None, reason)."""
    cands = [M]
    if g.d == "int8":
        cands += [c for c in (17, 32) if c > M]
    if g.d == "fp8":
        c16 = ((M + 15) // 16) * 16
        cands += [c for c in (c16, 32) if c > M]
    last = None
    for c in cands:
        try:
            t = g.make(c, N, K)
            g.run(t)
            torch.cuda.synchronize()
            del t
            return c, None
        except Exception as e:  # noqa: BLE001
            if is_oom(e):
                return None, "out of memory"
            last = f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"
    return None, last


# --------------------------------------------------------------------------------------------
# Environment
# --------------------------------------------------------------------------------------------

SMI_FIELDS = ["name", "driver_version", "pci.bus_id", "clocks.sm", "clocks.mem", "clocks.max.sm",
              "clocks.max.mem", "clocks.applications.graphics", "power.draw", "power.limit",
              "temperature.gpu", "memory.total", "memory.used", "clocks_event_reasons.active",
              "persistence_mode", "compute_mode"]


def nvidia_smi(index=0):
    try:
        out = subprocess.run(["nvidia-smi", f"--id={index}", "--format=csv,noheader",
                              "--query-gpu=" + ",".join(SMI_FIELDS)],
                             capture_output=True, text=True, timeout=30)
        if out.returncode != 0:
            # some fields are unsupported on some drivers: retry one by one
            d = {}
            for f in SMI_FIELDS:
                o = subprocess.run(["nvidia-smi", f"--id={index}", "--format=csv,noheader",
                                    "--query-gpu=" + f], capture_output=True, text=True, timeout=30)
                d[f] = o.stdout.strip() if o.returncode == 0 else None
            return d
        vals = [v.strip() for v in out.stdout.strip().split(",")]
        return dict(zip(SMI_FIELDS, vals))
    except Exception as e:  # noqa: BLE001
        return {"error": repr(e)}


def device_info(dev):
    p = torch.cuda.get_device_properties(dev)
    d = {"name": p.name, "sm_count": p.multi_processor_count, "total_memory_bytes": p.total_memory,
         "compute_capability": f"{p.major}.{p.minor}"}
    for a in ("L2_cache_size", "clock_rate", "memory_clock_rate", "memory_bus_width"):
        if hasattr(p, a):
            d[a] = getattr(p, a)
    return d


def software_info():
    d = {"python": platform.python_version(), "platform": platform.platform(),
         "torch": torch.__version__, "cuda_runtime": torch.version.cuda,
         "cudnn": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None}
    try:
        d["cublas_workspace_config"] = os.environ.get("CUBLAS_WORKSPACE_CONFIG")
        d["sdpa_backends_enabled"] = {
            "flash": torch.backends.cuda.flash_sdp_enabled(),
            "mem_efficient": torch.backends.cuda.mem_efficient_sdp_enabled(),
            "math": torch.backends.cuda.math_sdp_enabled(),
            "cudnn": getattr(torch.backends.cuda, "cudnn_sdp_enabled", lambda: None)()}
    except Exception:  # noqa: BLE001
        pass
    return d


METHOD = {
    "step": ("The reference step of issue #17: one decoder layer as PyTorch eager ops -- the config's norm "
             "(F.rms_norm, or F.layer_norm with bias), one fused QKV F.linear (bias where the config has one), "
             "rotate-half RoPE on the config's rotary fraction of each head of Q and K (precomputed cos/sin; "
             "none for learned-position/ALiBi models), K and V copy_ into a preallocated per-layer cache "
             "[B, kv_heads, Lmax, head_dim], F.scaled_dot_product_attention (is_causal in prefill, enable_gqa "
             "when kv_heads < heads), output projection, residual add, one fused gate+up F.linear, act(gate)*up "
             "(or act(up) for non-gated FFNs), down projection, residual add. Parallel attention+MLP from one "
             "norm (Phi, Falcon-7B; two norms for NeoX/Falcon new architecture), Gemma-2's post-attention and "
             "post-FFN norms, biases where the config has them. A stack of `layers` such layers, each with its "
             "own random weights (randn / sqrt(fan_in)) and KV cache (randn), is captured in one CUDA graph "
             "and replayed: `warmup` replays, then `reps` replays each timed by CUDA events around "
             "graph.replay(); ms_per_layer = median graph time / layers. Replays run back to back (no L2 "
             "flush; every layer's weights are distinct, so weights stream from DRAM whenever a layer's weights "
             "exceed L2). Decode: B sequences with `context` = L tokens already in the cache, one new token at "
             "position L (its K/V written to slot L; attention over kv_len = L+1 keys, not causal). Prefill: "
             "B x seq tokens from an empty cache (K/V written to slots 0..seq-1, causal attention over seq)."),
    "ops": ("Each operator on its own, at the shapes of the step, also under CUDA-graph replay: a graph holds "
            "calls_per_graph >= 4 back-to-back calls cycling over operand_sets independent operand sets "
            "(enough sets that the bytes touched exceed 3 x L2, at most 16), so repeated calls do not hit in "
            "L2; ms = median graph time / calls_per_graph. GEMMs: Y[M,N] = X[M,K] W[N,K]^T with M = batch "
            "(decode) or batch*seq (prefill); fp16/bf16 via F.linear (cuBLAS), int8 via torch._int_mm "
            "(int8 x int8 -> int32; W stored [N,K], passed transposed), fp8 via torch._scaled_mm (e4m3 x e4m3, "
            "tensor-wise scales, fp16 out), int4 weight-only via torch._convert_weight_to_int4pack + "
            "torch._weight_int4pack_mm (bf16 activations, group size 128 and inner k tiles 8 where K allows, else the "
            "largest that divide K, recorded as int4_group_size / int4_inner_k_tiles; only for M <= --int4-max-m, "
            "256 by default). When a path "
            "rejects M (int8: M <= 16 on some builds; fp8: M not a multiple of 16), M is padded as a real "
            "kernel would and M_run records it; paths the build lacks are recorded under skipped. Attention: "
            "the step's SDPA call alone (decode: q [B,heads,1,hd] against [B,kv_heads,L+1,hd]; prefill: "
            "causal [B,*,seq,hd]). Norm, RoPE (Q and K of one layer), activation (act(gate)*up or act), "
            "residual add and KV-cache write (K and V views of the QKV output copied into cache slots) at "
            "the step's [B*T, .] shapes, all in the step dtype."),
    "peaks": ("Large square GEMMs (8192^3) per dtype path and an int4 weight-only GEMV, and a 1 GiB device "
              "copy (bytes read + written), same graph method."),
    "kernels": ("The kernels one eager reference layer launches (torch.profiler, CUDA activities, one layer "
                "after warm-up), with their device time; the same kernels run in the graph."),
    "clocks": ("Clocks are read with nvidia-smi before the run, after a spin-up of --spin-up-s seconds of "
               "back-to-back 8192^3 fp16 GEMMs, and after the run; never set or locked."),
    "memory_guard": ("Before each step point the stack's weights + KV caches + activations are estimated; if "
                     "they exceed the free device memory (less a 4 GiB margin) the stack is shrunk to fewer "
                     "layers (down to 1), else the point is skipped and recorded; an out-of-memory error also "
                     "records a skip."),
}


# --------------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------------

def open_device(index):
    """The CUDA device `index` to measure on, current and the RNG seeded: (device, its
    device_info, its L2 bytes). Exits with a message without PyTorch or CUDA."""
    if torch is None:
        raise SystemExit(f"PyTorch is needed to measure ({_TORCH_IMPORT_ERROR}); --dry-run works without it")
    if not torch.cuda.is_available():
        raise SystemExit("no CUDA device")
    dev = torch.device("cuda", index)
    torch.cuda.set_device(dev)
    torch.manual_seed(0)
    dinfo = device_info(dev)
    return dev, dinfo, int(dinfo.get("L2_cache_size") or 50 * 2**20)


def add_run_options(ap, unit, warmup, reps):
    """The options every measuring script takes: graph replays before and during timing, the
    clocks' spin-up, a time budget over its `unit` (what it stops starting), the device."""
    ap.add_argument("--warmup", type=int, default=warmup, help="graph replays before timing")
    ap.add_argument("--reps", type=int, default=reps, help="timed graph replays (median reported)")
    ap.add_argument("--spin-up-s", type=float, default=3.0,
                    help="seconds of back-to-back fp16 GEMMs before measuring, so clocks and power settle")
    ap.add_argument("--time-budget-s", type=float, default=0,
                    help=f"stop starting new {unit} after this many seconds (0: no limit); the rest is "
                         "recorded as skipped")
    ap.add_argument("--device", type=int, default=0, help="CUDA device index")


def command_line(script, argv):
    """The command a file records: the script and its arguments."""
    return script + " " + " ".join(sys.argv[1:] if argv is None else argv)


def sweep_doc(what, dinfo, index, settings, models):
    """A measurement file's head (schema ltc-gpu-profile/1) with empty record lists."""
    return {
        "schema": SCHEMA,
        "what": what,
        "created_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "device": dinfo,
        "nvidia_smi": {"before": nvidia_smi(index)},
        "software": software_info(),
        "settings": settings,
        "models": models,
        "steps": [], "ops": [], "kernels": [], "skipped": [],
    }


def spin_up(dev, seconds, index, doc):
    """`seconds` of back-to-back fp16 GEMMs before measuring (clocks and power settle); the
    nvidia-smi reading after them goes to doc["nvidia_smi"]["after_spin_up"]."""
    if seconds <= 0:
        return
    a = torch.randn(8192, 8192, device=dev, dtype=torch.float16)
    g = capture(lambda: torch.mm(a, a))
    t0 = time.time()
    while time.time() - t0 < seconds:
        for _ in range(20):
            g.replay()
        torch.cuda.synchronize()
    del g, a
    cleanup()
    doc["nvidia_smi"]["after_spin_up"] = nvidia_smi(index)


def parse_ints(s):
    return [int(x) for x in s.split(",") if x.strip()]


def parse_kernel_points(s):
    pts = []
    for tok in s.split(","):
        tok = tok.strip()
        if not tok:
            continue
        try:
            phase, bn = tok.split(":")
            b, n = bn.split("x")
            if phase not in ("decode", "prefill") or int(b) < 1 or int(n) < 1:
                raise ValueError
            pts.append((phase, int(b), int(n)))
        except ValueError:
            raise argparse.ArgumentTypeError(f"--kernel-points: '{tok}' is not phase:BxN "
                                             "(phase decode or prefill, B and N >= 1)")
    return pts


def parse_prefill(s):
    pts = []
    for tok in s.split(","):
        tok = tok.strip()
        if not tok:
            continue
        if "x" in tok:
            b, t = tok.split("x")
            pts.append((int(b), int(t)))
        else:
            pts.append((1, int(tok)))
    return pts


def build_parser():
    ap = argparse.ArgumentParser(
        description="Measure the ltc roofline reference step (decode, prefill) and its operators on a CUDA GPU.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("models", nargs="+",
                    help="ltc built-in model names (configs/models/, configs/calibration/profile-models/) "
                         "or Hugging Face config.json paths")
    ap.add_argument("--out", default="gpu-profile.json", help="output JSON")
    ap.add_argument("--dtype", default="fp16", choices=["fp16", "bf16"], help="step dtype")
    ap.add_argument("--batches", default="1,16,64,256", help="decode batch sizes")
    ap.add_argument("--contexts", default="512,4096", help="decode context lengths L")
    ap.add_argument("--prefill", default="1x128,1x512,1x2048,8x512",
                    help="prefill points BxSEQ (a bare SEQ means B=1)")
    ap.add_argument("--layers", type=int, default=4, help="decoder layers in the graph-captured stack")
    ap.add_argument("--gemm-dtypes", default=",".join(GEMM_DTYPES), help="GEMM paths to measure")
    ap.add_argument("--int4-max-m", type=int, default=256,
                    help="int4 weight-only GEMMs only up to this M (the path is a decode kernel)")
    ap.add_argument("--no-steps", action="store_true", help="skip the step measurements")
    ap.add_argument("--no-ops", action="store_true", help="skip the per-operator measurements")
    ap.add_argument("--no-peaks", action="store_true", help="skip the peak GEMM / copy measurements")
    ap.add_argument("--no-kernels", action="store_true", help="skip the per-layer kernel list (torch.profiler)")
    ap.add_argument("--kernel-points", type=parse_kernel_points, default="decode:1x512,prefill:1x512",
                    help="where the kernel list is taken: phase:BxN,... (decode: N = context; prefill: N = seq)")
    add_run_options(ap, "models", warmup=5, reps=20)
    ap.add_argument("--dry-run", action="store_true",
                    help="parse configs and print the plan with memory estimates; needs no GPU or PyTorch")
    ap.add_argument("--quiet", action="store_true")
    return ap


def plan(args):
    models = []
    for spec in args.models:
        name, raw, src = resolve_model(spec)
        models.append((name, src, normalize(name, raw)))
    decode = [(b, l) for l in parse_ints(args.contexts) for b in parse_ints(args.batches)]
    prefill = parse_prefill(args.prefill)
    return models, decode, prefill


def rounded(x, sig=6):
    """Floats to `sig` significant digits (the measurements are not better than that)."""
    if isinstance(x, float):
        return float(f"{x:.{sig}g}") if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: rounded(v, sig) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [rounded(v, sig) for v in x]
    return x


def write_json(path, doc):
    tmp = str(path) + ".tmp"
    with open(tmp, "w") as f:
        json.dump(rounded(doc), f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def main(argv=None):
    args = build_parser().parse_args(argv)
    models, decode, prefill = plan(args)
    esize = 2
    if args.dry_run:
        out = {"schema": SCHEMA, "models": []}
        for name, src, s in models:
            m = {"name": name, "source": src, "shape": s, "gemms": gemm_shapes(s),
                 "decode_GiB": {f"B{b}_L{l}": round(step_bytes(s, b, 1, l + 1, args.layers, esize) / 2**30, 2)
                                for b, l in decode},
                 "prefill_GiB": {f"B{b}_S{t}": round(step_bytes(s, b, t, t, args.layers, esize) / 2**30, 2)
                                 for b, t in prefill}}
            out["models"].append(m)
        json.dump(out, sys.stdout, indent=1)
        print()
        return 0
    t_start = time.time()
    dev, dinfo, l2 = open_device(args.device)
    dtype = torch.float16 if args.dtype == "fp16" else torch.bfloat16
    log = (lambda *a: None) if args.quiet else (lambda *a: print(*a, file=sys.stderr, flush=True))

    doc = {
        "schema": SCHEMA,
        "what": ("ltc GPU profile: the roofline reference step (decode/prefill, ms per layer) and its operators "
                 "measured with CUDA-graph replay (tools/profile-gpu/profile_gpu.py)"),
        "created_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "device": dinfo,
        "nvidia_smi": {"before": nvidia_smi(args.device)},
        "software": software_info(),
        "method": METHOD,
        "settings": {"dtype": args.dtype, "layers": args.layers, "warmup": args.warmup, "reps": args.reps,
                     "spin_up_s": args.spin_up_s, "int4_max_m": args.int4_max_m,
                     "decode_batches": parse_ints(args.batches), "decode_contexts": parse_ints(args.contexts),
                     "prefill": [[b, t] for b, t in prefill], "gemm_dtypes": args.gemm_dtypes.split(","),
                     "kernel_points": [[ph, b, n] for ph, b, n in args.kernel_points],
                     "command": command_line("profile_gpu.py", argv)},
        "models": [{"name": n, "source": src, "shape": {k: v for k, v in s.items()}} for n, src, s in models],
        "steps": [], "ops": [], "peaks": [], "kernels": [], "skipped": [],
    }
    doc["software"]["driver"] = doc["nvidia_smi"]["before"].get("driver_version")
    out_path = Path(args.out)
    out_path.parent.mkdir(parents=True, exist_ok=True)

    def skip(**kw):
        doc["skipped"].append(kw)
        log("  skipped:", kw)

    def flush():
        doc["elapsed_s"] = round(time.time() - t_start, 1)
        write_json(out_path, doc)

    spin_up(dev, args.spin_up_s, args.device, doc)

    # ---------------------------------------------------------------- peaks
    gemm_paths = {d: Gemm(d, dev) for d in args.gemm_dtypes.split(",") if d}
    if "int4wo" in gemm_paths and not args.no_ops:
        skip(what="gemm", dtype="int4wo", reason=f"int4 weight-only GEMMs with M > {args.int4_max_m} not measured "
             "(a decode kernel; its time grows linearly in M) -- see --int4-max-m")
    if not args.no_peaks:
        log("peaks")
        for d, g in gemm_paths.items():
            shapes = [(8192, 8192, 8192)] if d != "int4wo" else [(1, 16384, 16384), (16, 16384, 16384)]
            for M, N, K in shapes:
                Mr, why = gemm_runnable_M(g, M, N, K)
                if Mr is None:
                    skip(what="peak_gemm", dtype=d, M=M, N=N, K=K, reason=why)
                    continue
                r = bench_sets(lambda: g.make(Mr, N, K), g.run, g.bytes(Mr, N, K), l2, args.warmup, args.reps)
                r.update({"what": "gemm", "dtype": d, "M": M, "M_run": Mr, "N": N, "K": K,
                          "tflops": 2 * Mr * N * K / (r["ms"] * 1e9),
                          "gbps": g.bytes(Mr, N, K) / (r["ms"] * 1e6)})
                doc["peaks"].append(r)
                log(f"  gemm {d} {M}x{N}x{K}: {r['ms']:.4f} ms {r['tflops']:.1f} TFLOP/s")
                cleanup()
        nb = 2**30
        r = bench_sets(lambda: (torch.empty(nb // 2, device=dev, dtype=torch.float16).normal_(),
                                torch.empty(nb // 2, device=dev, dtype=torch.float16)),
                       lambda t: t[1].copy_(t[0]), 2 * nb, l2, args.warmup, args.reps)
        r.update({"what": "copy", "bytes_read": nb, "bytes_written": nb, "gbps": 2 * nb / (r["ms"] * 1e6)})
        doc["peaks"].append(r)
        log(f"  copy 1 GiB: {r['ms']:.3f} ms {r['gbps']:.0f} GB/s")
        cleanup()
        flush()

    # ---------------------------------------------------------------- per model
    gemm_done = {}
    for name, src, s in models:
        if args.time_budget_s and time.time() - t_start > args.time_budget_s:
            skip(what="model", model=name, reason=f"time budget {args.time_budget_s:.0f} s spent")
            continue
        log(f"model {name}: {json.dumps({k: s[k] for k in ('hidden', 'heads', 'kv_heads', 'head_dim', 'ffn')})}")
        s["_act"] = act_fn(s["act"])
        if s.get("moe"):
            moe_setup(s, dtype, dev)
        tm = time.time()

        # -------- kernel list of one eager layer
        if not args.no_kernels:
            for phase, B, n in args.kernel_points:
                try:
                    st = StepStack(s, phase, B, n, 1, dtype, dev)
                    for _ in range(3):
                        st()
                    torch.cuda.synchronize()
                    from torch.profiler import profile, ProfilerActivity
                    with profile(activities=[ProfilerActivity.CUDA]) as prof:
                        st()
                        torch.cuda.synchronize()
                    ks = cuda_kernels(prof, 200)
                    doc["kernels"].append({"model": name, "phase": phase, "batch": B,
                                           ("context" if phase == "decode" else "seq"): n,
                                           "count": len(ks), "kernels": ks})
                    del st, prof
                except Exception as e:  # noqa: BLE001
                    skip(what="kernels", model=name, phase=phase, reason=f"{type(e).__name__}: {str(e)[:300]}")
                cleanup()

        # -------- steps
        if not args.no_steps:
            pts = [("decode", b, l) for b, l in decode] + [("prefill", b, t) for b, t in prefill]
            for phase, B, n in pts:
                T = 1 if phase == "decode" else n
                kv_len = n + 1 if phase == "decode" else n
                key = "context" if phase == "decode" else "seq"
                avail = free_bytes() - 4 * 2**30
                layers = args.layers
                while layers > 1 and step_bytes(s, B, T, kv_len, layers, esize) > avail:
                    layers //= 2
                if step_bytes(s, B, T, kv_len, layers, esize) > avail:
                    skip(what="step", model=name, phase=phase, batch=B, **{key: n},
                         reason=f"needs ~{step_bytes(s, B, T, kv_len, 1, esize) / 2**30:.1f} GiB for one layer, "
                                f"{avail / 2**30:.1f} GiB free")
                    continue
                try:
                    torch.manual_seed(point_seed(name, phase, B, n))
                    st = StepStack(s, phase, B, n, layers, dtype, dev)
                    g = capture(st)
                    r = time_graph(g, args.warmup, args.reps)
                    rec = {"model": name, "phase": phase, "batch": B, key: n,
                           "kv_len": min(kv_len, s["window"]) if s.get("window") and T == 1 else kv_len,
                           "tokens": B * T, "layers": layers, "dtype": args.dtype,
                           "ms_per_layer": r["median"] / layers, "ms_graph": r["median"],
                           "ms_graph_min": r["min"], "ms_graph_p90": r["p90"]}
                    if s.get("moe"):
                        rec["expert_dtype"] = str(s["_expert_dtype"]).replace("torch.", "")
                        rec["expert_group_align"] = s["_moe_align"]
                        g = None  # the graph's memory back before the eager forward
                        rec["tokens_per_expert"] = step_routing(s, st)
                    doc["steps"].append(rec)
                    log(f"  {phase} B{B} {key}{n} x{layers}: {rec['ms_per_layer']:.4f} ms/layer")
                    del g, st
                except Exception as e:  # noqa: BLE001
                    skip(what="step", model=name, phase=phase, batch=B, **{key: n},
                         reason=("out of memory: " if is_oom(e) else "") + f"{type(e).__name__}: {str(e)[:300]}"
                         + where(e))
                cleanup()
            flush()

        # -------- operators
        if not args.no_ops and (s.get("moe") or s.get("mla")):
            skip(what="ops", model=name, reason="operators on their own are defined for dense multi-head "
                 "attention layers; this model's MoE / latent-attention layer is measured as a whole step")
        elif not args.no_ops:
            H, nh, nkv, hd = s["hidden"], s["heads"], s["kv_heads"], s["head_dim"]
            bt = sorted({(b, 1) for b, _ in decode} | {(b, t) for b, t in prefill}, key=lambda p: (p[0] * p[1], p))
            Ms = sorted({b * t for b, t in bt})

            def rec_op(op, phase, dtype_name, extra, r):
                rr = {"model": name, "op": op, "phase": phase, "dtype": dtype_name}
                rr.update(extra)
                rr.update(r)
                doc["ops"].append(rr)
                return rr

            # GEMMs
            for gname, N, K in gemm_shapes(s):
                for d, g in gemm_paths.items():
                    for M in Ms:
                        phase = "decode" if M in {b for b, _ in decode} else "prefill"
                        if d == "int4wo" and M > args.int4_max_m:
                            continue
                        ck = (d, M, N, K)
                        if ck in gemm_done:  # same shape already measured for another model
                            r = dict(gemm_done[ck])
                            r["shared_with"] = r.pop("model_measured", None)
                            rec_op("gemm", phase, d, {"name": gname, "M": M, "N": N, "K": K}, r)
                            continue
                        Mr, why = gemm_runnable_M(g, M, N, K)
                        if Mr is None:
                            skip(what="gemm", model=name, name=gname, dtype=d, M=M, N=N, K=K, reason=why)
                            continue
                        try:
                            r = bench_sets(lambda: g.make(Mr, N, K), g.run, g.bytes(Mr, N, K), l2,
                                           args.warmup, args.reps)
                        except Exception as e:  # noqa: BLE001
                            skip(what="gemm", model=name, name=gname, dtype=d, M=M, N=N, K=K,
                                 reason=f"{type(e).__name__}: {str(e)[:300]}")
                            cleanup()
                            continue
                        r.update({"M_run": Mr, "tflops": 2 * M * N * K / (r["ms"] * 1e9),
                                  "gbps": g.bytes(Mr, N, K) / (r["ms"] * 1e6)})
                        if d == "int4wo" and g.int4:
                            r.update({"int4_" + k: v for k, v in g.int4.items()})
                        gemm_done[ck] = dict(r, model_measured=name)
                        rec_op("gemm", phase, d, {"name": gname, "M": M, "N": N, "K": K}, r)
            log(f"  gemms done ({time.time() - tm:.0f} s)")

            tdt = dtype

            def T_(*shape):
                return torch.randn(shape, device=dev, dtype=tdt)

            # attention
            for phase, B, n in [("decode", b, l) for b, l in decode] + [("prefill", b, t) for b, t in prefill]:
                T = 1 if phase == "decode" else n
                kvl = n + 1 if phase == "decode" else n
                key = "context" if phase == "decode" else "seq"
                byts = esize * (B * nh * T * hd * 2 + 2 * B * nkv * kvl * hd)
                if byts > free_bytes() - 4 * 2**30:
                    skip(what="op", op="attention", model=name, phase=phase, batch=B, **{key: n}, reason="memory")
                    continue
                causal = phase == "prefill"
                try:
                    r = bench_sets(lambda: (T_(B, nh, T, hd), T_(B, nkv, kvl, hd), T_(B, nkv, kvl, hd)),
                                   lambda t: sdpa(t[0], t[1], t[2], causal), byts, l2, args.warmup, args.reps)
                    flops = 4 * B * nh * T * kvl * hd * (0.5 if causal else 1.0)
                    r.update({"tflops": flops / (r["ms"] * 1e9), "gbps": byts / (r["ms"] * 1e6)})
                    rec_op("attention", phase, args.dtype,
                           {"batch": B, key: n, "kv_len": kvl, "heads": nh, "kv_heads": nkv, "head_dim": hd,
                            "causal": causal}, r)
                except Exception as e:  # noqa: BLE001
                    skip(what="op", op="attention", model=name, phase=phase, batch=B, **{key: n},
                         reason=f"{type(e).__name__}: {str(e)[:300]}")
                cleanup()

            # elementwise-class ops at the step's [B, T, .] shapes
            nw = torch.ones(H, device=dev, dtype=tdt)
            nb_ = torch.zeros(H, device=dev, dtype=tdt) if s["norm"] == "layer_norm" else None
            act = s["_act"]
            Fw = s["ffn"]
            rot = s["rotary_dim"]
            for B, T in bt:
                phase = "decode" if T == 1 else "prefill"
                M = B * T
                ext = {"batch": B, "seq": T, "M": M}
                jobs = []
                wn = {"n1_w": nw, "n1_b": nb_}
                jobs.append(("norm", lambda: (T_(B, T, H),), lambda t: apply_norm(s, t[0], wn, "n1"),
                             2 * M * H * esize, {"norm": s["norm"], "hidden": H}))
                jobs.append(("residual_add", lambda: (T_(B, T, H), T_(B, T, H)), lambda t: t[0] + t[1],
                             3 * M * H * esize, {"hidden": H}))
                if s["gated"]:
                    jobs.append(("activation", lambda: (T_(B, T, 2 * Fw),),
                                 lambda t: (lambda g, u: act(g) * u)(*t[0].chunk(2, dim=-1)),
                                 3 * M * Fw * esize, {"act": s["act"], "gated": True, "ffn": Fw}))
                else:
                    jobs.append(("activation", lambda: (T_(B, T, Fw),), lambda t: act(t[0]),
                                 2 * M * Fw * esize, {"act": s["act"], "gated": False, "ffn": Fw}))
                if rot:
                    pos = 0 if T > 1 else 4096
                    cs = rope_tables(T, pos, rot, tdt, dev)

                    def mk_rope():
                        qkv = T_(B, T, s["qkv_out"])
                        q, k, _ = qkv.split([nh * hd, nkv * hd, nkv * hd], dim=-1)
                        return (q.view(B, T, nh, hd).transpose(1, 2), k.view(B, T, nkv, hd).transpose(1, 2))

                    jobs.append(("rope", mk_rope,
                                 lambda t: (rope(t[0], cs[0], cs[1], rot), rope(t[1], cs[0], cs[1], rot)),
                                 2 * M * (nh + nkv) * hd * esize, {"rotary_dim": rot, "heads": nh, "kv_heads": nkv,
                                                                    "head_dim": hd, "q_and_k": True}))

                def mk_kv():
                    qkv = T_(B, T, s["qkv_out"])
                    _, k, v = qkv.split([nh * hd, nkv * hd, nkv * hd], dim=-1)
                    lmax = T + 1
                    return (k.view(B, T, nkv, hd).transpose(1, 2), v.view(B, T, nkv, hd).transpose(1, 2),
                            torch.empty(B, nkv, lmax, hd, device=dev, dtype=tdt),
                            torch.empty(B, nkv, lmax, hd, device=dev, dtype=tdt))

                p0 = 1 if T == 1 else 0

                def run_kv(t):
                    t[2][:, :, p0:p0 + T].copy_(t[0])
                    t[3][:, :, p0:p0 + T].copy_(t[1])

                jobs.append(("kv_write", mk_kv, run_kv, 2 * 2 * M * nkv * hd * esize,
                             {"kv_heads": nkv, "head_dim": hd, "k_and_v": True}))
                for op, mk, run, byts, extra in jobs:
                    try:
                        r = bench_sets(mk, run, byts, l2, args.warmup, args.reps)
                        r["gbps"] = byts / (r["ms"] * 1e6)
                        r["bytes"] = byts
                        rec_op(op, phase, args.dtype, dict(ext, **extra), r)
                    except Exception as e:  # noqa: BLE001
                        skip(what="op", op=op, model=name, phase=phase, batch=B, seq=T,
                             reason=f"{type(e).__name__}: {str(e)[:300]}")
            cleanup()
            flush()
        for key_ in ("_act", "_expert_dtype", "_moe_align"):
            s.pop(key_, None)
        log(f"  model {name} done in {time.time() - tm:.0f} s")

    doc["nvidia_smi"]["after"] = nvidia_smi(args.device)
    flush()
    log(f"wrote {out_path} ({len(doc['steps'])} steps, {len(doc['ops'])} ops, {len(doc['skipped'])} skipped, "
        f"{time.time() - t_start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
