#!/usr/bin/python3
"""Draws docs/figures/rope-scores-vs-distance.svg from the CSV that
docs/figures/rope_scores.cpp prints (chapter 11). Standard library only.

  plot_rope_scores.py SCORES.csv OUT.svg

One panel per scaling, stacked, all on the same axes: the scaling's curve in
colour over the unscaled RoPE curve in grey, a dashed line at the original
context length (512) the scaled models were stretched from.
"""
import csv
import sys
from xml.sax.saxutils import escape

LABELS = {
    "none": "RoPE, no scaling (base 10000)",
    "pi": "position interpolation, s = 4 (p -> p/4)",
    "ntk": "NTK-aware base, s = 4 (base 10000 * 4^(64/62))",
    "yarn": "YaRN, s = 4, L = 512, alpha = 1, beta = 32 (tables * (0.1 ln 4 + 1))",
    "xpos": "xPos, gamma = 0.4, scale_base = 512",
}
COLOURS = {"none": "#222222", "pi": "#1f77b4", "ntk": "#2ca02c", "yarn": "#d62728", "xpos": "#9467bd"}
ORIGINAL_LENGTH = 512

WIDTH, LEFT, RIGHT = 760, 58, 16
PANEL_H, GAP, TOP, BOTTOM = 118, 30, 40, 44


def nice_ticks(lo, hi, step):
    first = int(lo // step) * step
    return [v for v in range(first, int(hi) + step, step) if lo <= v <= hi]


def main():
    src, out = sys.argv[1], sys.argv[2]
    with open(src, newline="") as f:
        rows = list(csv.reader(f))
    names = rows[0][1:]
    d = [int(r[0]) for r in rows[1:]]
    cols = {n: [float(r[i + 1]) for r in rows[1:]] for i, n in enumerate(names)}

    y_lo = min(min(v) for v in cols.values())
    y_hi = max(max(v) for v in cols.values())
    y_lo, y_hi = 20 * ((y_lo // 20)), 20 * (-(-y_hi // 20))
    d_max = d[-1]
    plot_w = WIDTH - LEFT - RIGHT
    height = TOP + len(names) * PANEL_H + (len(names) - 1) * GAP + BOTTOM

    def x_of(v):
        return LEFT + plot_w * v / d_max

    def y_of(v):  # within a panel whose top is 0
        return PANEL_H * (y_hi - v) / (y_hi - y_lo)

    def points(values):
        return " ".join(f"{x_of(a):.1f},{y_of(b):.1f}" for a, b in zip(d, values))

    svg = [
        f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
        f'width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" '
        f'font-family="sans-serif" font-size="11">',
        f'<rect width="{WIDTH}" height="{height}" fill="white"/>',
        f'<text x="{WIDTH / 2}" y="20" text-anchor="middle" font-size="13">'
        f"score(d) = (R_m q) · (R_(m−d) k), k = q, dh = 64, m = {d_max}</text>",
        "<defs>",
        f'<polyline id="base" fill="none" stroke="#bbbbbb" stroke-width="1" points="{points(cols["none"])}"/>',
        "</defs>",
    ]
    for i, name in enumerate(names):
        top = TOP + i * (PANEL_H + GAP)
        svg.append(f'<g transform="translate(0,{top})">')
        svg.append(f'<rect x="{LEFT}" y="0" width="{plot_w}" height="{PANEL_H}" fill="none" stroke="#888"/>')
        for v in nice_ticks(y_lo, y_hi, 40):
            y = y_of(v)
            svg.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>')
            svg.append(f'<text x="{LEFT - 5}" y="{y + 4:.1f}" text-anchor="end">{v}</text>')
        zero = y_of(0)
        svg.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{zero:.1f}" y2="{zero:.1f}" stroke="#999"/>')
        xo = x_of(ORIGINAL_LENGTH)
        svg.append(f'<line x1="{xo:.1f}" x2="{xo:.1f}" y1="0" y2="{PANEL_H}" stroke="#999" '
                   f'stroke-dasharray="4 3"/>')
        for v in range(0, d_max + 1, 256):
            svg.append(f'<line x1="{x_of(v):.1f}" x2="{x_of(v):.1f}" y1="{PANEL_H}" y2="{PANEL_H + 4}" '
                       f'stroke="#888"/>')
        if name != "none":
            svg.append('<use xlink:href="#base" href="#base"/>')
        svg.append(f'<polyline fill="none" stroke="{COLOURS.get(name, "#000")}" stroke-width="1" '
                   f'points="{points(cols[name])}"/>')
        svg.append(f'<text x="{LEFT}" y="-7" fill="{COLOURS.get(name, "#000")}">{escape(LABELS.get(name, name))}'
                   + ("" if name == "none" else ' <tspan fill="#999">(grey: no scaling)</tspan>') + "</text>")
        svg.append("</g>")
    bottom = TOP + len(names) * PANEL_H + (len(names) - 1) * GAP
    for v in range(0, d_max + 1, 256):
        svg.append(f'<text x="{x_of(v):.1f}" y="{bottom + 16}" text-anchor="middle">{v}</text>')
    svg.append(f'<text x="{LEFT + plot_w / 2}" y="{bottom + 34}" text-anchor="middle">'
               f"relative distance d = m − n (dashed: the original context, {ORIGINAL_LENGTH})</text>")
    svg.append(f'<text transform="translate(14,{TOP + (bottom - TOP) / 2}) rotate(-90)" '
               f'text-anchor="middle">score</text>')
    svg.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main()
