#!/usr/bin/python3
"""PyTorch side of bench/compare_with_torch.py: the computations of
ropegrad-models-bench, written from docs/appendix-a-formulas.md (building blocks,
RoPE, the three attention variants, the model), with the same shapes and parameter counts and the same JSON output.

  torch_reference.py module --module attention [--D 512 --H 8 --T 256 --B 8 --threads 1]
  torch_reference.py train --variant w2 [--D 128 --H 4 --L 2 --T 128 --B 16 --V 256 --d_ff 344]

Threads: --threads N calls torch.set_num_threads(N); the DRIVER must also set
OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, MKL_NUM_THREADS (and OMP_WAIT_POLICY=PASSIVE)
before Python starts, since torch.set_num_threads does not limit OpenBLAS.

Memory:
  module: saved_bytes = bytes of the tensors autograd saved for backward
    (torch.autograd.graph.saved_tensors_hooks), counted once per storage and
    leaving out storages that existed before forward (inputs, parameters) -
    what ropegrad's saved_bytes measures. PyTorch has no CPU allocator
    statistics, so there is no peak_bytes on this side.
  train: rss_peak_growth_bytes = VmHWM after the steps minus VmRSS after
    `import torch` (before the model is built); VmHWM is reset there through
    /proc/self/clear_refs so the import's own transient peak is not counted.
Needs Debian's python3-torch (1.13): run with /usr/bin/python3.
"""
import argparse
import json
import math
import os
import time


def proc_status_bytes(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return -1


def reset_peak_rss():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


import torch  # noqa: E402  (after the helpers: nothing above allocates much)
import torch.nn as tnn  # noqa: E402
import torch.nn.functional as F  # noqa: E402


# ---- building blocks (docs/appendix-a-formulas.md, building blocks) -------------------------------------------------

def trunc_normal_(w, std, a):
    tnn.init.trunc_normal_(w, mean=0.0, std=std, a=-a, b=a)
    return w


class Linear(tnn.Module):
    """y = x W^T, W (d_out, d_in), no bias."""

    def __init__(self, d_in, d_out):
        super().__init__()
        std = math.sqrt(2.0 / (d_in + d_out))
        self.weight = tnn.Parameter(trunc_normal_(torch.empty(d_out, d_in), std, 3 * std))

    def forward(self, x):
        return x @ self.weight.t()


class Embedding(tnn.Module):
    def __init__(self, v, d):
        super().__init__()
        self.weight = tnn.Parameter(trunc_normal_(torch.empty(v, d), 1.0, 3.0))

    def forward(self, ids):
        return self.weight[ids]


class RMSNorm(tnn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = tnn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class SwiGLU(tnn.Module):
    def __init__(self, d, d_ff):
        super().__init__()
        self.w1, self.w2, self.w3 = Linear(d, d_ff), Linear(d_ff, d), Linear(d, d_ff)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


# ---- RoPE, interleaved pairs (docs/appendix-a-formulas.md, RoPE) -------------------------------------------

class RotaryEmbedding(tnn.Module):
    def __init__(self, dh, max_len, theta=10000.0):
        super().__init__()
        k = torch.arange(dh // 2, dtype=torch.float64)
        freq = theta ** (-2.0 * k / dh)
        ang = torch.arange(max_len, dtype=torch.float64)[:, None] * freq[None, :]  # (L, dh/2)
        self.register_buffer("cos", ang.cos().float(), persistent=False)
        self.register_buffer("sin", ang.sin().float(), persistent=False)

    def forward(self, x):
        # x (..., T, dh): pairs (x_2k, x_2k+1)
        t = x.shape[-2]
        c, s = self.cos[:t], self.sin[:t]
        x0, x1 = x[..., 0::2], x[..., 1::2]
        return torch.stack((x0 * c - x1 * s, x0 * s + x1 * c), dim=-1).flatten(-2)


def split_heads(x, h):  # (B, T, D) -> (B, H, T, dh)
    b, t, d = x.shape
    return x.view(b, t, h, d // h).transpose(1, 2)


def merge_heads(x):  # (B, H, T, dh) -> (B, T, D)
    b, h, t, dh = x.shape
    return x.transpose(1, 2).reshape(b, t, h * dh)


def causal_softmax(scores):
    t_q, t_k = scores.shape[-2], scores.shape[-1]
    allowed = torch.ones(t_q, t_k, dtype=torch.bool, device=scores.device).tril()
    return torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)


# ---- the three attention variants (docs/appendix-a-formulas.md, attention) -----------------------------------------

class MultiHeadAttention(tnn.Module):
    def __init__(self, d, h, rope):
        super().__init__()
        self.h, self.rope = h, rope
        self.q_proj, self.k_proj, self.v_proj, self.o_proj = (Linear(d, d) for _ in range(4))

    def forward(self, x):
        q = self.rope(split_heads(self.q_proj(x), self.h))
        k = self.rope(split_heads(self.k_proj(x), self.h))
        v = split_heads(self.v_proj(x), self.h)
        p = causal_softmax(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]))
        return self.o_proj(merge_heads(p @ v))


class W2Attention(tnn.Module):
    """S = -(|R mu_q - R mu_k|^2 + dh (s_q - s_k)^2) / (tau + 1e-6), scalar sigma per head."""

    def __init__(self, d, h, rope):
        super().__init__()
        self.h, self.rope = h, rope
        self.dh = d // h
        self.q_proj, self.k_proj, self.v_proj, self.o_proj = (Linear(d, d) for _ in range(4))
        self.sigma_q_proj, self.sigma_k_proj = Linear(d, h), Linear(d, h)
        t0 = math.log(math.expm1(math.sqrt(self.dh)))  # softplus(t0) = sqrt(dh)
        self.temperature = tnn.Parameter(torch.full((h,), t0))

    def forward(self, x):
        mq = self.rope(split_heads(self.q_proj(x), self.h))  # (B, H, T, dh)
        mk = self.rope(split_heads(self.k_proj(x), self.h))
        v = split_heads(self.v_proj(x), self.h)
        sq = F.softplus(self.sigma_q_proj(x)).transpose(1, 2)  # (B, H, T)
        sk = F.softplus(self.sigma_k_proj(x)).transpose(1, 2)
        # expanded forms: one GEMM, never a (T, T, dh) tensor
        d_mu = (mq * mq).sum(-1)[..., :, None] + (mk * mk).sum(-1)[..., None, :] - 2 * (mq @ mk.transpose(-1, -2))
        d_sigma = self.dh * (sq[..., :, None] - sk[..., None, :]) ** 2
        tau = F.softplus(self.temperature)[None, :, None, None]
        p = causal_softmax(-(d_mu + d_sigma) / (tau + 1e-6))
        return self.o_proj(merge_heads(p @ v))


class TripleAttention(tnn.Module):
    """S = -det G(q_i, k_j, r_i) * dh^-1.5."""

    def __init__(self, d, h, rope):
        super().__init__()
        self.h, self.rope = h, rope
        self.q_proj, self.k_proj, self.r_proj, self.v_proj, self.o_proj = (Linear(d, d) for _ in range(5))

    def forward(self, x):
        q = self.rope(split_heads(self.q_proj(x), self.h))
        k = self.rope(split_heads(self.k_proj(x), self.h))
        r = self.rope(split_heads(self.r_proj(x), self.h))
        v = split_heads(self.v_proj(x), self.h)
        dh = q.shape[-1]
        qq, rr, rq = (q * q).sum(-1)[..., None], (r * r).sum(-1)[..., None], (r * q).sum(-1)[..., None]
        kk = (k * k).sum(-1)[..., None, :]
        qk = q @ k.transpose(-1, -2)
        kr = r @ k.transpose(-1, -2)
        det = qq * kk * rr + 2 * qk * kr * rq - qq * kr * kr - kk * rq * rq - rr * qk * qk
        p = causal_softmax(-det * dh ** -1.5)
        return self.o_proj(merge_heads(p @ v))


ATTENTION = {"standard": MultiHeadAttention, "w2": W2Attention, "triple": TripleAttention}


# ---- the LM (docs/appendix-a-formulas.md, model and tasks) --------------------------------------------------------------

class Block(tnn.Module):
    def __init__(self, d, h, d_ff, rope, variant):
        super().__init__()
        self.ln1, self.ln2 = RMSNorm(d), RMSNorm(d)
        self.attn = ATTENTION[variant](d, h, rope)
        self.ffn = SwiGLU(d, d_ff)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.ffn(self.ln2(x))


class TransformerLM(tnn.Module):
    def __init__(self, v, t, d, layers, h, d_ff, variant):
        super().__init__()
        rope = RotaryEmbedding(d // h, t)
        self.token_embeddings = Embedding(v, d)
        self.layers = tnn.ModuleList(Block(d, h, d_ff, rope, variant) for _ in range(layers))
        self.ln_final = RMSNorm(d)
        self.lm_head = Linear(d, v)

    def forward(self, ids):
        x = self.token_embeddings(ids)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.ln_final(x))


def default_d_ff(d):
    return ((8 * d + 2) // 3 + 63) // 64 * 64  # ceil(8/3 D) rounded up to a multiple of 64


# ---- measurements -----------------------------------------------------------------------------

def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def threads_info():
    return {"torch_threads": torch.get_num_threads(),
            "omp_num_threads_env": os.environ.get("OMP_NUM_THREADS", ""),
            "openblas_num_threads_env": os.environ.get("OPENBLAS_NUM_THREADS", "")}


def make_module(name, a):
    d, h, t, b, v = a.D, a.H, a.T, a.B, a.V
    d_ff = a.d_ff if a.d_ff > 0 else default_d_ff(d)
    rope = RotaryEmbedding(d // h, t)
    if name == "embedding":
        return Embedding(v, d), torch.randint(0, v, (b, t)), f"ids ({b}, {t}) -> ({b}, {t}, {d})"
    if name == "rope":
        return rope, torch.randn(b, h, t, d // h, requires_grad=True), f"x ({b}, {h}, {t}, {d // h})"
    x = torch.randn(b, t, d, requires_grad=True)
    shape = f"x ({b}, {t}, {d})"
    mods = {"linear": lambda: Linear(d, d), "rmsnorm": lambda: RMSNorm(d), "swiglu": lambda: SwiGLU(d, d_ff),
            "attention": lambda: MultiHeadAttention(d, h, rope)}
    mods.update({v: (lambda c=c: c(d, h, rope)) for v, c in ATTENTION.items() if v != "standard"})
    if name not in mods:
        raise SystemExit(f"unknown module {name}")
    return mods[name](), x, shape


def run_module(a):
    m, x, shape = make_module(a.module, a)
    params = list(m.parameters())
    existing = {p.storage().data_ptr() for p in params} | {x.storage().data_ptr()}
    existing |= {buf.storage().data_ptr() for buf in m.buffers()}
    fwd_ms, total_ms, saved = [], [], 0
    for it in range(a.warmup + a.iters):
        for p in params:
            p.grad = None
        x.grad = None
        with torch.no_grad():
            grad_out = torch.randn_like(m(x).float())
        seen = {}

        def pack(t):
            st = t.storage()
            if st.data_ptr() not in existing:
                seen[st.data_ptr()] = st.nbytes()
            return t

        t0 = time.perf_counter()
        if it == a.warmup:  # the hooks cost a little: measure memory on one iteration, not timed
            with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
                y = m(x)
            saved = sum(seen.values())
            y.backward(grad_out)
            continue
        y = m(x)
        f = time.perf_counter() - t0
        y.backward(grad_out)
        total = time.perf_counter() - t0
        if it > a.warmup:
            fwd_ms.append(f * 1e3)
            total_ms.append(total * 1e3)
    out = {"impl": "torch", "mode": "module", "module": a.module, "D": a.D, "H": a.H, "T": a.T, "B": a.B,
           "shape": shape, "params": sum(p.numel() for p in params), "iters": a.iters - 1, "warmup": a.warmup,
           **threads_info(), "fwd_ms": median(fwd_ms), "fwd_bwd_ms": median(total_ms),
           "fwd_bwd_ms_min": min(total_ms), "saved_bytes": saved}
    print(json.dumps(out))


def run_train(a):
    rss_before = proc_status_bytes("VmRSS")
    hwm_reset = reset_peak_rss()
    rss_base = proc_status_bytes("VmRSS")
    d_ff = a.d_ff if a.d_ff > 0 else default_d_ff(a.D)
    model = TransformerLM(a.V, a.T, a.D, a.L, a.H, d_ff, a.variant)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    rss_model = proc_status_bytes("VmRSS")
    ids = torch.randint(0, a.V, (a.B, a.T))
    targets = torch.randint(0, a.V, (a.B, a.T))
    steps = []
    loss = 0.0
    for it in range(a.warmup + a.iters):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        logits = model(ids)
        lo = F.cross_entropy(logits.view(-1, a.V), targets.view(-1))
        lo.backward()
        opt.step()
        ms = (time.perf_counter() - t0) * 1e3
        loss = lo.item()
        if it >= a.warmup:
            steps.append(ms)
    med = median(steps)
    hwm = proc_status_bytes("VmHWM")
    out = {"impl": "torch", "mode": "train", "variant": a.variant, "D": a.D, "H": a.H, "L": a.L, "T": a.T,
           "B": a.B, "V": a.V, "d_ff": d_ff, "params": sum(p.numel() for p in model.parameters()),
           "iters": a.iters, "warmup": a.warmup, **threads_info(), "step_ms": med, "step_ms_min": min(steps),
           "tokens_per_s": a.B * a.T / (med / 1e3), "loss": loss, "rss_before_bytes": rss_before,
           "rss_base_bytes": rss_base, "rss_model_bytes": rss_model, "rss_peak_bytes": hwm,
           "rss_peak_growth_bytes": hwm - rss_base, "hwm_reset": hwm_reset}
    print(json.dumps(out))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("mode", choices=["module", "train"])
    p.add_argument("--module", default="attention")
    p.add_argument("--variant", default="standard", choices=sorted(ATTENTION))
    for key, default in [("D", None), ("H", None), ("L", 2), ("T", None), ("B", None), ("V", None),
                         ("d_ff", None), ("iters", None), ("warmup", 2), ("seed", 0), ("threads", 1)]:
        p.add_argument(f"--{key}", type=int, default=default)
    a = p.parse_args()
    module_mode = a.mode == "module"
    # The same defaults as ropegrad-models-bench.
    for key, mod_default, train_default in [("D", 512, 128), ("H", 8, 4), ("T", 256, 128), ("B", 8, 16),
                                            ("V", 1024, 256), ("d_ff", 0, 344), ("iters", 10, 5)]:
        if getattr(a, key) is None:
            setattr(a, key, mod_default if module_mode else train_default)
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    if module_mode:
        a.iters += 1  # one more: the memory-measuring iteration is not timed
        run_module(a)
    else:
        run_train(a)


if __name__ == "__main__":
    main()
