#!/usr/bin/env python3
"""ropegrad against PyTorch CPU, measured in the same run, reported as ratios.

Runs bench/ropegrad-models-bench (C++) and bench/torch_reference.py (PyTorch,
Debian's python3-torch at /usr/bin/python3) for every case, each run a fresh
process printing one JSON object, and prints Markdown tables:

  time ratio   = PyTorch time / ropegrad time   (> 1: ropegrad is faster)
  memory ratio = ropegrad bytes / PyTorch bytes (< 1: ropegrad holds less)

Cases (--cases, comma-separated; default all):
  modules  fwd+bwd of linear, embedding, rmsnorm, swiglu, rope, attention, w2,
           triple at D=512, H=8, T=256, B=8 (issue 3)
  train    = base,long,deep,wide
  base, long, deep, wide
           one training step (forward, cross_entropy, backward, AdamW) of the
           LM for each attention variant (issue 4)
  tiled    long contexts: one training step at T = 1024, 2048, 4096 (D=128,
           H=4, L=2, B=1) for each variant, ropegrad's tiled attention
           (nn/fast/attention_tiled.h) and its materialised kernels next to PyTorch
           (not in the default list: it takes minutes; --cases tiled)

Threads: PyTorch runs at 1 and 2 threads, with OMP_NUM_THREADS,
OPENBLAS_NUM_THREADS, MKL_NUM_THREADS set to that number and
OMP_WAIT_POLICY=PASSIVE in its environment before Python starts; each ratio
uses PyTorch's best setting. ropegrad runs with its defaults (its own pool,
one thread per core; OpenBLAS kept single-threaded inside it) and again with
ROPEGRAD_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1.

Standard library only. Nothing asserts a time: on a shared machine the
numbers are noisy, so compare runs made under similar load.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import time

from attention_variants import variant_names

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

VARIANTS = variant_names()  # standard first
ATTN_MODULES = ["attention"] + VARIANTS[1:]  # the benches name standard attention's module "attention"
MODULES = ["linear", "embedding", "rmsnorm", "swiglu", "rope"] + ATTN_MODULES
BASE = dict(D=128, H=4, L=2, T=128, B=16, V=256, d_ff=344)
CONFIGS = {
    "base": ("Base", BASE, 1.5),
    "long": ("Long", dict(BASE, T=512, B=4), 1.5),
    "deep": ("Deep", dict(BASE, L=4), 1.5),
    "wide": ("Wide", dict(D=512, H=8, L=4, T=256, B=8, V=1024, d_ff=1376), 1.5),
}
ONE_THREAD_TARGET = 1.3  # ropegrad 1 thread >= 1.3x PyTorch 1 thread
SGEMM_TARGET = {"base": 60, "long": 60, "deep": 60, "wide": 85}  # % of 2-core sgemm speed, whole step
SPEEDUP_TARGET = 1.8     # ropegrad 2 threads >= 1.8x faster than 1 thread
SGEMM_SHAPE = dict(M=2048, N=512, K=512)
MEMORY_TARGET = 0.6     # ropegrad peak RSS growth <= 0.6 x PyTorch's
VARIANT_TARGET = 1.3    # W2 and triple step time <= 1.3 x standard's (ropegrad)
THREAD_VARS = ["OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_WAIT_POLICY",
               "ROPEGRAD_NUM_THREADS"]

COMMANDS = []  # every command run, in order, as a shell line


def run_json(cmd, env_extra):
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARS}
    env.update(env_extra)
    line = " ".join(f"{k}={v}" for k, v in env_extra.items()) + (" " if env_extra else "") + shlex.join(cmd)
    COMMANDS.append(line)
    print(f"[{time.strftime('%H:%M:%S')}] {line}", file=sys.stderr, flush=True)
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"failed ({proc.returncode}): {line}\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def torch_env(n):
    n = str(n)
    return {"OMP_NUM_THREADS": n, "OPENBLAS_NUM_THREADS": n, "MKL_NUM_THREADS": n, "OMP_WAIT_POLICY": "PASSIVE"}


RG_ONE = {"ROPEGRAD_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


def flags(d):
    out = []
    for k, v in d.items():
        out += [f"--{k}", str(v)]
    return out


def fmt_ms(x):
    return f"{x:.1f}" if x >= 10 else f"{x:.2f}"


def mib(b):
    return f"{b / 2**20:.1f}"


def run_settings(a, common):
    """One benchmark command (the arguments `common`, shared by both programs) in every setting: ropegrad at
    its defaults, ropegrad on one thread, and PyTorch at each of --torch-threads. Returns (rg, rg1, {n: torch})."""
    rg = run_json([a.bin] + common, {})
    rg1 = run_json([a.bin] + common, RG_ONE)
    th = {n: run_json([a.python, a.torch_script] + common + ["--threads", str(n)], torch_env(n))
          for n in a.torch_threads}
    return rg, rg1, th


def verdict(ok):
    return "met" if ok else "**MISS**"


# ---- issue 3: modules ----------------------------------------------------------------------------

def bench_modules(a):
    iters, warmup = (3, 1) if a.quick else (7, 2)
    shape = dict(D=512, H=8, T=256, B=8)
    rows = []
    for m in MODULES:
        common = ["module", "--module", m, "--iters", str(iters), "--warmup", str(warmup)] + flags(shape)
        rows.append((m, *run_settings(a, common)))

    out = ["## Issue 3: modules, forward + backward (D=512, H=8, T=256, B=8)", "",
           "Median ms per forward+backward (a random output gradient); ratio = best PyTorch / ropegrad "
           "(> 1: ropegrad faster).", ""]
    tcols = " | ".join(f"PyTorch {n}T ms" for n in a.torch_threads)
    out.append(f"| module | params | ropegrad ms | ropegrad 1T ms | {tcols} | ratio (best PyTorch / ropegrad) |")
    out.append("|" + "---|" * (5 + len(a.torch_threads)))
    for m, rg, rg1, th in rows:
        best = min(r["fwd_bwd_ms"] for r in th.values())
        params = rg["params"] if rg["params"] == th[a.torch_threads[0]]["params"] else \
            f"{rg['params']} vs {th[a.torch_threads[0]]['params']} (DIFFER)"
        tms = " | ".join(fmt_ms(th[n]["fwd_bwd_ms"]) for n in a.torch_threads)
        out.append(f"| {m} | {params} | {fmt_ms(rg['fwd_bwd_ms'])} | {fmt_ms(rg1['fwd_bwd_ms'])} | {tms} | "
                   f"{best / rg['fwd_bwd_ms']:.2f}x |")
    out += ["", "### Attention memory held for backward", "",
            "ropegrad: bytes alive after forward minus before, less the output (memory_stats); "
            "PyTorch: bytes of the tensors autograd saved (saved_tensors_hooks, once per storage, "
            "inputs and parameters left out). Peak: ropegrad's most bytes alive during forward+backward "
            "beyond what was alive before (PyTorch has no CPU allocator statistics).", "",
            "| module | ropegrad saved MiB | PyTorch saved MiB | ratio ropegrad / PyTorch | ropegrad peak MiB |",
            "|---|---|---|---|---|"]
    for m, rg, rg1, th in rows:
        if m not in ATTN_MODULES:
            continue
        ts = th[a.torch_threads[0]]["saved_bytes"]
        out.append(f"| {m} | {mib(rg['saved_bytes'])} | {mib(ts)} | {rg['saved_bytes'] / ts:.2f} | "
                   f"{mib(rg['peak_bytes'])} |")
    return out


# ---- issue 4: training steps -----------------------------------------------------------------------

def train_flops(cfg):
    """FLOPs of one training step of the standard-attention LM, counted as bench/ropegrad_bench.cpp counts a
    product (2*M*N*K) and only for the products: forward = every linear map (per layer Wq, Wk, Wv, Wo: 4 D^2,
    SwiGLU: 3 D d_ff; the LM head D V; the embedding is a gather, 0) at 2 FLOPs per weight per token, plus the
    causal attention products Q K^T and P V over the T (T + 1) / 2 pairs a causal mask keeps:
    2 * 2 * B * (T (T + 1) / 2) * D per layer. Backward = 2 x forward (a gradient for each operand); a step
    = 3 x forward. Norms, softmax, RoPE, cross-entropy and AdamW are not counted: they are the overhead the
    percentage measures. W2 and triple are given standard's count, so their extra work shows as a lower
    percentage."""
    D, L, T, B, V, F = cfg["D"], cfg["L"], cfg["T"], cfg["B"], cfg["V"], cfg["d_ff"]
    weights = L * (4 * D * D + 3 * D * F) + D * V
    fwd = 2 * B * T * weights + L * 2 * 2 * B * (T * (T + 1) // 2) * D
    return 3 * fwd


def bench_sgemm(a, when):
    """GFLOP/s of rg::matmul (OpenBLAS sgemm split over ropegrad's pool) at SGEMM_SHAPE, 2 threads and 1."""
    common = ["sgemm", "--iters", "10" if a.quick else "30", "--warmup", "3"] + flags(SGEMM_SHAPE)
    two = run_json([a.bin] + common, {})
    one = run_json([a.bin] + common, RG_ONE)
    return {"when": when, "2T": two["gflops_best"], "1T": one["gflops_best"], "threads": two["ropegrad_threads"],
            "simd": two.get("simd", "?")}


def fastest(runs):
    """Of several runs of one command, the one with the lowest median step: another program on the cores only
    ever slows a run down, so the fastest round is the least disturbed."""
    return min(runs, key=lambda r: r["step_ms"])


def bench_train(a, key):
    title, cfg, target = CONFIGS[key]
    if a.quick:
        iters, warmup = 2, 1
    else:
        iters, warmup = (3, 1) if key == "wide" else (10, 3)  # the median of 10: steps of 50 ms move with the load
    rounds = {v: [] for v in VARIANTS}
    for _ in range(a.rounds):  # interleaved: each round runs every variant and setting once
        for v in VARIANTS:
            common = ["train", "--variant", v, "--iters", str(iters), "--warmup", str(warmup)] + flags(cfg)
            rounds[v].append(run_settings(a, common))
    res = {}
    for v, runs in rounds.items():
        res[v] = (fastest([r[0] for r in runs]), fastest([r[1] for r in runs]),
                  {n: fastest([r[2][n] for r in runs]) for n in a.torch_threads})
    # The GEMM floor: the step's products alone, replayed on raw sgemm (ropegrad-models-bench gemm-floor).
    floor_rounds = "1" if a.quick else ("2" if key == "wide" else "5")
    floors = {}
    for v in VARIANTS:
        common = ["gemm-floor", "--variant", v, "--rounds", floor_rounds] + flags(cfg)
        floors[v] = (run_json([a.bin] + common, {}), run_json([a.bin] + common, RG_ONE))
    return title, cfg, target, res, key, floors


def sgemm_ref(sg):
    return max(s["2T"] for s in sg)  # the faster of the two measurements: the stricter reference


def train_tables(a, results, sg):
    """The training step's report: the sgemm reference, then each table."""
    ref = sgemm_ref(sg)
    return (sgemm_section(sg, ref) + step_section(a, results) + variant_cost_section(results)
            + scaling_section(a, results, ref) + floor_section(results))


def sgemm_section(sg, ref):
    """The sgemm reference every step is set against."""
    out = ["## sgemm reference (the speed a step is set against)", "",
           f"`ropegrad-models-bench sgemm` = rg::matmul of ({SGEMM_SHAPE['M']}, {SGEMM_SHAPE['K']}) by "
           f"({SGEMM_SHAPE['K']}, {SGEMM_SHAPE['N']}) float32: OpenBLAS sgemm split over ropegrad's pool; "
           "best GFLOP/s of the iterations (the least disturbed by other users of the cores), measured before and "
           "after the training runs. The reference is the higher 2-thread "
           "figure.", "",
           "| when | ropegrad threads | GFLOP/s 2T | GFLOP/s 1T | 2T / 1T |", "|---|---|---|---|---|"]
    for s in sg:
        out.append(f"| {s['when']} | {s['threads']} | {s['2T']:.1f} | {s['1T']:.1f} | {s['2T'] / s['1T']:.2f}x |")
    out += ["", f"Reference: {ref:.1f} GFLOP/s. ropegrad's elementwise and row kernels ran their "
            f"{sg[0]['simd']} compilation (tensor/simd.h; ROPEGRAD_SIMD=baseline forces SSE2).", ""]
    return out


def step_section(a, results):
    """One training step: ropegrad's time and memory against PyTorch's."""
    out = []
    out += ["## Issue 4: one training step (forward, cross_entropy, backward, AdamW)", "",
           f"Median ms per step after warm-up, the fastest of {a.rounds} interleaved round(s) of each command. "
           "Time ratio = best PyTorch / ropegrad default (> 1: ropegrad faster). Memory = peak RSS growth (VmHWM after the steps minus VmRSS before the model is built; "
           "for PyTorch, after `import torch`), PyTorch's from its best-thread run; ratio = ropegrad / "
           "PyTorch. ropegrad's tensor peak (memory_stats) is shown beside it.", ""]
    tcols = " | ".join(f"PyTorch {n}T ms" for n in a.torch_threads)
    out.append(f"| config | variant | params | ropegrad ms | ropegrad 1T ms | {tcols} | ropegrad tok/s | "
               "time ratio | target | ropegrad RSS MiB | PyTorch RSS MiB | mem ratio (<= 0.6) | "
               "ropegrad tensor peak MiB |")
    out.append("|" + "---|" * (12 + len(a.torch_threads)))
    for title, cfg, target, res, _, _ in results:
        for v in VARIANTS:
            rg, rg1, th = res[v]
            best_n = min(th, key=lambda n: th[n]["step_ms"])
            best = th[best_n]
            ratio = best["step_ms"] / rg["step_ms"]
            mem = rg["rss_peak_growth_bytes"] / best["rss_peak_growth_bytes"]
            params = rg["params"] if rg["params"] == best["params"] else f"{rg['params']} vs {best['params']} (DIFFER)"
            tms = " | ".join(fmt_ms(th[n]["step_ms"]) for n in a.torch_threads)
            out.append(f"| {title} | {v} | {params} | {fmt_ms(rg['step_ms'])} | {fmt_ms(rg1['step_ms'])} | {tms} | "
                       f"{rg['tokens_per_s']:.0f} | {ratio:.2f}x ({best_n}T) | >= {target}x {verdict(ratio >= target)} | "
                       f"{mib(rg['rss_peak_growth_bytes'])} | {mib(best['rss_peak_growth_bytes'])} | "
                       f"{mem:.2f} {verdict(mem <= MEMORY_TARGET)} | {mib(rg['tensor_peak_bytes'])} |")
    return out


def variant_cost_section(results):
    """Each variant's step time against standard's, in ropegrad and in PyTorch."""
    out = []
    out += ["", f"### Variant cost in ropegrad (step time / standard's, target <= {VARIANT_TARGET}x)", "",
            "| config | " + " | ".join(f"{v} / standard" for v in VARIANTS[1:]) + " | same ratios in PyTorch (best) |",
            "|---|" + "---|" * len(VARIANTS)]
    for title, cfg, target, res, _, _ in results:
        std = res["standard"][0]["step_ms"]
        tbest = {v: min(r["step_ms"] for r in res[v][2].values()) for v in VARIANTS}
        cells = []
        for v in VARIANTS[1:]:
            r = res[v][0]["step_ms"] / std
            cells.append(f"{r:.2f}x {verdict(r <= VARIANT_TARGET)}")
        torch_ratios = ", ".join(f"{tbest[v] / tbest['standard']:.2f}x" for v in VARIANTS[1:])
        out.append(f"| {title} | " + " | ".join(cells) + f" | {torch_ratios} |")
    return out


def scaling_section(a, results, ref):
    """One thread, thread scaling and GEMM efficiency."""
    out = []
    out += ["", "### Single thread, thread scaling and GEMM efficiency", "",
            f"1T ratio = PyTorch 1 thread / ropegrad 1 thread (target >= {ONE_THREAD_TARGET}x); 2T/1T = ropegrad "
            f"1-thread time / default time (target >= {SPEEDUP_TARGET}x); GFLOP/s = the step's GEMM FLOPs "
            "(`train_flops` in this script: linear maps and causal attention products, 3 x forward, standard's "
            "count for every variant) / ropegrad's default step time; % sgemm = that / the sgemm reference "
            f"({ref:.1f} GFLOP/s; target >= 60 % on Base, Long, Deep, >= 85 % on Wide).", "",
            "| config | variant | GFLOP/step | ropegrad 1T ms | PyTorch 1T ms | 1T ratio | 2T/1T | step GFLOP/s | "
            "% sgemm | target |", "|---|---|---|---|---|---|---|---|---|---|"]
    for title, cfg, target, res, key, _ in results:
        flops = train_flops(cfg)
        for v in VARIANTS:
            rg, rg1, th = res[v]
            t1 = th.get(1)
            r1 = t1["step_ms"] / rg1["step_ms"] if t1 else None
            sp = rg1["step_ms"] / rg["step_ms"]
            gf = flops / (rg["step_ms"] / 1000) / 1e9
            pct = 100 * gf / ref
            out.append(f"| {title} | {v} | {flops / 1e9:.2f} | {fmt_ms(rg1['step_ms'])} | "
                       f"{fmt_ms(t1['step_ms']) if t1 else '-'} | "
                       f"{(f'{r1:.2f}x ' + verdict(r1 >= ONE_THREAD_TARGET)) if t1 else '-'} | "
                       f"{sp:.2f}x {verdict(sp >= SPEEDUP_TARGET)} | {gf:.1f} | {pct:.0f} % | "
                       f">= {SGEMM_TARGET[key]} % {verdict(pct >= SGEMM_TARGET[key])} |")
    return out


def floor_section(results):
    """The GEMM floor: the step's products alone, replayed on raw sgemm."""
    out = []
    out += ["", "### The GEMM floor: what the products alone cost", "",
            "`ropegrad-models-bench gemm-floor` runs one step of the same model under a GEMM trace "
            "(GemmTrace, tensor/kernels.h), which lists every product the step hands to BLAS (shapes, transposes, "
            "batch counts; the W2 and triple products included), and replays the list on raw cblas_sgemm with "
            "nothing else; on 2 threads the list is cut into two runs of equal FLOPs replayed at once. Fastest "
            "replay. PyTorch calls the same BLAS for the same products, so the floor is under both frameworks' "
            "steps, and a ratio can be at most PyTorch's time / the floor (\"ceiling\": ropegrad with every "
            "non-GEMM part taking no time). \"Rest\" = ropegrad's step - the floor: the non-GEMM work, and the "
            "products running slower inside a step than on the replay's warm buffers. \"Needs rest <=\" = the "
            "rest the target allows (PyTorch's time / target - the floor).", "",
            "| config | variant | GEMM GFLOP as run | floor 1T ms | ropegrad 1T ms | rest 1T ms | PyTorch 1T ms | "
            f"1T ceiling | 1T target {ONE_THREAD_TARGET}x needs rest <= | floor 2T ms | ropegrad ms | rest ms | "
            "PyTorch best ms | time ceiling | time target needs rest <= |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for title, cfg, target, res, key, floors in results:
        for v in VARIANTS:
            rg, rg1, th = res[v]
            f2, f1 = floors[v]
            best = min(r["step_ms"] for r in th.values())
            t1 = th.get(1)
            one = (f"{fmt_ms(t1['step_ms'])} | {t1['step_ms'] / f1['floor_ms']:.2f}x | "
                   f"{t1['step_ms'] / ONE_THREAD_TARGET - f1['floor_ms']:.1f}") if t1 else "- | - | -"
            out.append(f"| {title} | {v} | {f1['gemm_gflop']:.2f} | {fmt_ms(f1['floor_ms'])} | "
                       f"{fmt_ms(rg1['step_ms'])} | {rg1['step_ms'] - f1['floor_ms']:.1f} | {one} | "
                       f"{fmt_ms(f2['floor_ms'])} | {fmt_ms(rg['step_ms'])} | {rg['step_ms'] - f2['floor_ms']:.1f} | "
                       f"{fmt_ms(best)} | {best / f2['floor_ms']:.2f}x | {best / target - f2['floor_ms']:.1f} |")
    return out


# ---- long contexts: tiled attention ------------------------------------------------------------------

TILED_T = [1024, 2048, 4096]
TILED_CFG = dict(D=128, H=4, L=2, B=1, V=256, d_ff=344)


def bench_tiled(a):
    iters, warmup = (1, 1) if a.quick else (2, 1)
    out = ["## Long contexts: one training step with tiled attention (D=128, H=4, L=2, B=1)", "",
           "Median ms per step (forward, cross_entropy, backward, AdamW) after warm-up. ropegrad runs with its "
           "defaults, once with `--attention tiled` (online softmax, nn/fast/attention_tiled.h) and once with "
           "`--attention materialized` (the (B, H, T, T) kernels of nn/attention_scores.h). Time ratio = best "
           "PyTorch / ropegrad tiled (> 1: ropegrad faster). Memory = peak RSS growth (as in the training "
           "table); tensor peak = ropegrad's allocator statistics (memory_stats).", ""]
    tcols = " | ".join(f"PyTorch {n}T ms" for n in a.torch_threads)
    out.append(f"| variant | T | ropegrad tiled ms | ropegrad materialised ms | {tcols} | time ratio | "
               "ropegrad tiled RSS MiB | ropegrad materialised RSS MiB | PyTorch RSS MiB | "
               "ropegrad tiled tensor peak MiB | ropegrad materialised tensor peak MiB |")
    out.append("|" + "---|" * (10 + len(a.torch_threads)))
    for v in VARIANTS:
        for t in TILED_T:
            common = ["train", "--variant", v, "--iters", str(iters), "--warmup", str(warmup)] + \
                flags(dict(TILED_CFG, T=t))
            tiled = run_json([a.bin] + common + ["--attention", "tiled"], {})
            mat = run_json([a.bin] + common + ["--attention", "materialized"], {})
            th = {n: run_json([a.python, a.torch_script] + common + ["--threads", str(n)], torch_env(n))
                  for n in a.torch_threads}
            best_n = min(th, key=lambda n: th[n]["step_ms"])
            best = th[best_n]
            tms = " | ".join(fmt_ms(th[n]["step_ms"]) for n in a.torch_threads)
            out.append(f"| {v} | {t} | {fmt_ms(tiled['step_ms'])} | {fmt_ms(mat['step_ms'])} | {tms} | "
                       f"{best['step_ms'] / tiled['step_ms']:.2f}x ({best_n}T) | "
                       f"{mib(tiled['rss_peak_growth_bytes'])} | {mib(mat['rss_peak_growth_bytes'])} | "
                       f"{mib(best['rss_peak_growth_bytes'])} | {mib(tiled['tensor_peak_bytes'])} | "
                       f"{mib(mat['tensor_peak_bytes'])} |")
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", default="modules,base,long,deep,wide",
                   help="comma-separated: modules, base, long, deep, wide, tiled")
    p.add_argument("--quick", action="store_true", help="fewer iterations (a smoke run)")
    p.add_argument("--bin", default=os.path.join(REPO, "build", "bench", "ropegrad-models-bench"),
                   help="the ropegrad-models-bench executable")
    p.add_argument("--python", default="/usr/bin/python3", help="a Python with torch")
    p.add_argument("--torch-script", default=os.path.join(HERE, "torch_reference.py"))
    p.add_argument("--torch-threads", default="1,2", help="PyTorch thread counts to try")
    p.add_argument("--rounds", type=int, default=2,
                   help="interleaved rounds of the training runs; each command's fastest round counts (default 2)")
    a = p.parse_args()
    a.torch_threads = [int(n) for n in a.torch_threads.split(",")]
    cases = [c.strip() for c in a.cases.replace("train", "base,long,deep,wide").split(",") if c.strip()]
    unknown = [c for c in cases if c not in ("modules", "tiled") and c not in CONFIGS]
    if unknown:
        raise SystemExit(f"unknown case(s) {unknown}: modules, {', '.join(CONFIGS)}, tiled")
    if not os.access(a.bin, os.X_OK):
        raise SystemExit(f"{a.bin} not found: build the ropegrad-models-bench target, or pass --bin")

    t0 = time.time()
    out = [f"# ropegrad vs PyTorch CPU ({time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores, "
           f"load average {os.getloadavg()[0]:.1f} at start)", ""]
    if "modules" in cases:
        out += bench_modules(a) + [""]
    sg = []
    if any(c in cases for c in CONFIGS):
        sg.append(bench_sgemm(a, "before"))
    results = [bench_train(a, c) for c in CONFIGS if c in cases]
    if results:
        sg.append(bench_sgemm(a, "after"))
        out += train_tables(a, results, sg) + [""]
    if "tiled" in cases:
        out += bench_tiled(a) + [""]
    out += [f"Load average at the end: {os.getloadavg()[0]:.1f}; wall time {time.time() - t0:.0f} s.", "",
            "## Commands run", "", "```"] + COMMANDS + ["```"]
    print("\n".join(out))


if __name__ == "__main__":
    main()
