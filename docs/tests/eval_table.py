#!/usr/bin/env python3
"""Prints the evaluation metric of each variant of a `ropegrad compare` run at
the given steps, as the Markdown table appendix B shows.

    eval_table.py RUN_DIR SETTING STEP...
"""
import csv
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bench"))
from attention_variants import variant_names  # noqa: E402


def main():
    run, setting, steps = pathlib.Path(sys.argv[1]), sys.argv[2], [int(s) for s in sys.argv[3:]]
    variants = variant_names()
    metric = {}
    for v in variants:
        with open(run / v / "metrics.csv") as f:
            for row in csv.DictReader(f):
                if row["eval_metric"]:
                    metric[(v, int(row["step"]))] = float(row["eval_metric"])
    print("| setting | step | " + " | ".join(variants) + " |")
    print("|---|---:|" + "---:|" * len(variants))
    for s in steps:
        cells = [f"{metric[(v, s)]:.4f}" if (v, s) in metric else "n/a" for v in variants]
        print(f"| {setting} | {s} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
