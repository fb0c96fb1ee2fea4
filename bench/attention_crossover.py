#!/usr/bin/env python3
"""Where tiled attention starts to beat the materialised kernels.

Runs bench/ropegrad-models-bench `module` (forward + backward of one attention
module, causal, with RoPE) for the three variants at D=128, H=4, B=1 and a
range of T, once with --attention materialized and once with --attention
tiled, single-threaded (ROPEGRAD_NUM_THREADS=1, OPENBLAS_NUM_THREADS=1), and
prints a Markdown table of the fastest of --iters runs (the minimum is the
least noisy statistic on a shared machine) and the ratio. The crossover it
shows is what nn/attention_path.h's kTiledAttentionMinKeys and
kTripleTiledMinKeys are set from.

  python3 bench/attention_crossover.py [--bin build/bench/ropegrad-models-bench] [--T 64,128,256,512,1024]
"""
import argparse
import json
import os
import subprocess

from attention_variants import variant_names

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def run(binary, module, t, path, iters):
    env = dict(os.environ, ROPEGRAD_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    cmd = [binary, "module", "--module", module, "--D", "128", "--H", "4", "--B", "1", "--T", str(t),
           "--attention", path, "--iters", str(iters), "--warmup", "1"]
    return json.loads(subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bin", default=os.path.join(REPO, "build", "bench", "ropegrad-models-bench"))
    p.add_argument("--T", default="64,128,256,512,1024")
    p.add_argument("--iters", type=int, default=5)
    a = p.parse_args()
    print(f"Load average at start: {os.getloadavg()[0]:.1f}\n")
    print("| module | T | materialised ms | tiled ms | materialised / tiled | materialised peak MiB | tiled peak MiB |")
    print("|---|---|---|---|---|---|---|")
    for module in ["attention"] + variant_names()[1:]:  # "attention": standard attention's module
        for t in [int(x) for x in a.T.split(",")]:
            m = run(a.bin, module, t, "materialized", a.iters)
            s = run(a.bin, module, t, "tiled", a.iters)
            print(f"| {module} | {t} | {m['fwd_bwd_ms_min']:.2f} | {s['fwd_bwd_ms_min']:.2f} | "
                  f"{m['fwd_bwd_ms_min'] / s['fwd_bwd_ms_min']:.2f} | {m['peak_bytes'] / 2**20:.2f} | "
                  f"{s['peak_bytes'] / 2**20:.2f} |", flush=True)
    print(f"\nLoad average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
