#!/usr/bin/python3
"""Draws the book's explanatory figures as SVG, from what the library prints.
Standard library only; the same input gives the same bytes.

  draw_figures.py FIGURE DATA OUT.svg

FIGURE is one of the modes of docs/figures/figure_data.cpp (views,
broadcast-matmul, rope, masks, tiles, gram, bpe, fd-error, init, embedding,
rmsnorm, silu, rope-scores, schedule, optimizers, checkpoint, w2, flop-shares,
kv-cache, ring, buckets, zero), whose output is DATA, or
`graph`, whose DATA is the Graphviz DOT that `to_dot` writes (chapter 2's
snippet_ch02_autograd dot). The docs test redraws each figure with the
command in its `<!-- figure: ... -->` mark and compares the bytes.
"""
import math
import re
import sys
from xml.sax.saxutils import escape

WIDTH = 700
FONT = "font-family=\"DejaVu Sans, Arial, sans-serif\""
MONO = "font-family=\"DejaVu Sans Mono, monospace\""
# one light colour per storage index (12), and accents
PALETTE = ["#fde2e4", "#e2ece9", "#dfe7fd", "#fff1c1", "#e8dff5", "#d7f0db",
           "#fce1c8", "#d4eef7", "#f2e3d5", "#e9f5c9", "#f6d6f0", "#dde3ea"]
BLUE, RED, GREEN, GREY, DARK = "#1f77b4", "#d62728", "#2ca02c", "#9a9a9a", "#222222"


class Svg:
    def __init__(self, height, width=WIDTH):
        self.w, self.h, self.items = width, height, []

    def add(self, s):
        self.items.append(s)

    def text(self, x, y, s, size=13, anchor="start", mono=False, weight="normal", fill=DARK, italic=False):
        style = ' font-style="italic"' if italic else ""
        self.add(f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
                 f'font-weight="{weight}" fill="{fill}"{style} {MONO if mono else FONT}>{escape(str(s))}</text>')

    def rect(self, x, y, w, h, fill="none", stroke=DARK, width=1.0, dash=None, rx=0):
        d = f' stroke-dasharray="{dash}"' if dash else ""
        self.add(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="{rx}" fill="{fill}" '
                 f'stroke="{stroke}" stroke-width="{width}"{d}/>')

    def line(self, x1, y1, x2, y2, stroke=DARK, width=1.0, dash=None, arrow=False):
        d = f' stroke-dasharray="{dash}"' if dash else ""
        a = ' marker-end="url(#arrow)"' if arrow else ""
        self.add(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{stroke}" '
                 f'stroke-width="{width}"{d}{a}/>')

    def circle(self, x, y, r, fill="none", stroke=DARK, width=1.0, dash=None):
        d = f' stroke-dasharray="{dash}"' if dash else ""
        self.add(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" fill="{fill}" stroke="{stroke}" '
                 f'stroke-width="{width}"{d}/>')

    def polygon(self, points, fill, stroke="none", opacity=1.0):
        pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
        self.add(f'<polygon points="{pts}" fill="{fill}" stroke="{stroke}" fill-opacity="{opacity}"/>')

    def render(self):
        head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.w}" height="{self.h}" '
                f'viewBox="0 0 {self.w} {self.h}">\n'
                '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="9" '
                'markerHeight="9" markerUnits="userSpaceOnUse" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" '
                'fill="context-stroke"/></marker></defs>\n'
                f'<rect x="0" y="0" width="{self.w}" height="{self.h}" fill="white"/>\n')
        return head + "\n".join(self.items) + "\n</svg>\n"


def records(text):
    """The `KEY rest` lines of figure_data's output, in order."""
    out = []
    for line in text.strip().split("\n"):
        key, _, rest = line.partition(" ")
        out.append((key, rest))
    return out


def nums(s):
    return [float(x) for x in s.split()]


def fmt(x):
    return f"{x:g}"


# ---- chapter 1: views ------------------------------------------------------------------------------------


def views(data):
    recs = records(data)
    n = int(dict(recs)["storage"])
    panels, cur = [], None
    for key, rest in recs:
        if key == "view":
            cur = {"name": rest}
            panels.append(cur)
        elif cur is not None:
            cur[key] = rest
    svg = Svg(560)
    svg.text(20, 24, "one storage of 12 floats", 14, weight="bold")
    cell = 48
    x0 = (WIDTH - n * cell) / 2
    for i in range(n):
        svg.rect(x0 + i * cell, 36, cell, 34, fill=PALETTE[i % len(PALETTE)])
        svg.text(x0 + i * cell + cell / 2, 58, i, 14, "middle", mono=True)
    svg.text(x0 - 8, 58, "index", 12, "end", fill=GREY)
    for p, panel in enumerate(panels):
        col, row = p % 2, p // 2
        px, py = 20 + col * 345, 100 + row * 230
        shape = [int(v) for v in panel["shape"].split()]
        strides, offset = panel["strides"].split(), panel["offset"]
        reads = [int(v) for v in panel["reads"].split()]
        svg.text(px, py, panel["name"], 13, mono=True, weight="bold")
        svg.text(px, py + 20, f"shape ({', '.join(map(str, shape))})   strides ({', '.join(strides)})   "
                              f"offset {offset}", 12, mono=True, fill="#444444")
        rows, cols = shape
        c = 34
        for r in range(rows):
            for k in range(cols):
                idx = reads[r * cols + k]
                svg.rect(px + k * c, py + 34 + r * c, c, c, fill=PALETTE[idx % len(PALETTE)])
                svg.text(px + k * c + c / 2, py + 34 + r * c + 22, idx, 13, "middle", mono=True)
        note = {0: "element (i, j) reads storage[4i + j]",
                1: "the same storage, strides swapped: no copy",
                2: "starts at storage[1]: the offset moves, the strides stay",
                3: "stride 0 along dim 1: a row reads one float 4 times"}.get(p, "")
        svg.text(px, py + 34 + rows * c + 18, note, 12, italic=True, fill="#444444")
    return svg.render()


# ---- chapter 2: the autograd graph from to_dot -----------------------------------------------------------


def graph(dot):
    nodes, edges = {}, []
    for m in re.finditer(r'^\s*n(\d+) \[shape=(\w+)(?:, style=filled, fillcolor=\w+)?, label="([^"]*)"\];', dot, re.M):
        nodes[int(m.group(1))] = (m.group(2), m.group(3).replace("\\n", " "))
    for m in re.finditer(r"^\s*n(\d+) -> n(\d+);", dot, re.M):
        edges.append((int(m.group(1)), int(m.group(2))))
    inputs = {i: [a for a, b in edges if b == i] for i in nodes}
    # depth: the longest path from the root (n0), which backward runs first
    depth = {0: 0}
    for i in sorted(nodes):  # topological order: every node after all its consumers
        for a in inputs[i]:
            depth[a] = max(depth.get(a, 0), depth[i] + 1)
    top = max(depth.values())
    xs, slot = {}, [0]

    def place(i):
        if i in xs:
            return xs[i]
        ins = [place(a) for a in inputs[i]]
        if ins:
            xs[i] = sum(ins) / len(ins)
        else:
            xs[i] = slot[0]
            slot[0] += 1
        return xs[i]

    place(0)
    span = max(slot[0] - 1, 1)
    left, right = 110, WIDTH - 150
    row_h = 78
    svg = Svg(60 + (top + 1) * row_h + 20)
    pos = {}
    for i in nodes:
        x = left + (right - left) * xs[i] / span
        y = 50 + (top - depth[i]) * row_h
        pos[i] = (x, y)
    for a, b in edges:  # forward direction: from input to consumer
        (x1, y1), (x2, y2) = pos[a], pos[b]
        svg.line(x1, y1 + 17, x2, y2 - 19, stroke=GREY, width=1.5, arrow=True)
    for i, (kind, label) in nodes.items():
        x, y = pos[i]
        w = 9 + 7.6 * len(label)
        if kind == "box":
            svg.rect(x - w / 2, y - 17, w, 34, fill="#f5f5f5", rx=3)
        else:
            svg.add(f'<ellipse cx="{x:.1f}" cy="{y:.1f}" rx="{w / 2 + 6:.1f}" ry="17" fill="#cfe3f6" '
                    f'stroke="{DARK}" stroke-width="1"/>')
        svg.text(x, y + 5, label, 12.5, "middle", mono=True)
        # the order backward runs the nodes in
        bx = x - w / 2 - (14 if kind == "box" else 20)
        svg.circle(bx, y, 11, fill=RED, stroke=RED)
        svg.text(bx, y + 4.5, i + 1, 12, "middle", weight="bold", fill="white")
    svg.text(20, 24, "grey arrows: the forward pass;  red numbers: the order backward() visits the nodes",
             13)
    return svg.render()


# ---- chapter 3: a broadcast operand and its gradient -------------------------------------------------------


def matrix(svg, x, y, values, rows, cols, c=30, fill="#ffffff", dash=None, size=12):
    for r in range(rows):
        for k in range(cols):
            svg.rect(x + k * c, y + r * c, c, c, fill=fill, dash=dash, stroke="#555555")
            svg.text(x + k * c + c / 2, y + r * c + c / 2 + 4.5, fmt(values[r * cols + k]), size, "middle",
                     mono=True)


def broadcast_matmul(data):
    d = dict(records(data))
    svg = Svg(400)
    a = [nums(d["a0"]), nums(d["a1"])]
    parts = [nums(d["part0"]), nums(d["part1"])]
    grad = nums(d["grad_b"])
    svg.text(20, 24, f"forward: a ({d['a_shape'].replace(' ', ', ')}) @ b ({d['b_shape'].replace(' ', ', ')}) "
                     f"-> ({d['out_shape'].replace(' ', ', ')})", 14, weight="bold")
    svg.text(20, 46, f"b is expanded to ({d['b_expanded_shape'].replace(' ', ', ')}) with strides "
                     f"({d['b_expanded_strides'].replace(' ', ', ')}): both batch entries read the same 4 floats",
             12.5, fill="#444444")
    for i in range(2):
        y = 70 + i * 120
        svg.text(20, y + 14, f"batch {i}", 12.5, weight="bold")
        matrix(svg, 80, y, a[i], 3, 2, fill=PALETTE[2])
        svg.text(154, y + 50, "@", 16, "middle")
        matrix(svg, 170, y + 15, nums(d["b"]), 2, 2, fill=PALETTE[3], dash=None if i == 0 else "4,3")
        svg.text(205, y + 96, "b" if i == 0 else "b again (stride 0)", 11.5, "middle", italic=True,
                 fill="#444444")
    svg.line(300, 60, 300, 330, stroke="#cccccc")
    svg.text(320, 74, "backward of sum(out): g = ones, and", 12.5)
    svg.text(320, 92, "each batch entry gives b a gradient aᵢᵀ g:", 12.5)
    for i in range(2):
        y = 110 + i * 78
        svg.text(330, y + 36, f"batch {i}", 12)
        matrix(svg, 400, y + 4, parts[i], 2, 2, c=34, fill=PALETTE[5])
    svg.text(385, 192, "+", 20, "middle")
    svg.line(484, 150, 560, 178, stroke=GREY, width=1.5, arrow=True)
    svg.line(484, 228, 560, 196, stroke=GREY, width=1.5, arrow=True)
    svg.text(608, 140, "b.grad", 12.5, "middle", mono=True, weight="bold")
    matrix(svg, 568, 148, grad, 2, 2, c=40, fill=PALETTE[3])
    svg.text(608, 250, "sum_to(parts, (2, 2))", 11.5, "middle", mono=True)
    svg.text(20, 372, "A dim read with stride 0 was used once per index along it, so its gradient is the sum "
                      "over that dim:", 12.5)
    svg.text(20, 390, "kernels::sum_to(grad, input shape) ends the backward of every broadcasting op.", 12.5)
    return svg.render()


# ---- chapter 9: RoPE's rotation of the pairs of one vector -----------------------------------------------


def rope(data):
    recs = records(data)
    base = dict(recs)["base"]
    freqs = nums(dict(recs)["frequencies"])
    positions = [nums(rest.split(" ", 1)[1]) for key, rest in recs if key == "position"]
    pairs = len(freqs)
    svg = Svg(336)
    svg.text(20, 24, f"one vector x of {2 * pairs} numbers (base {base}) at positions 0 to {len(positions) - 1}",
             13.5, weight="bold")
    svg.text(20, 44, "pair k is turned by ω_k radians per position; the numbers at the arrow tips are positions",
             12.5, fill="#444444")
    col = WIDTH / pairs
    radius = 62
    shades = ["#08306b", "#2171b5", "#4292c6", "#6baed6", "#9ecae1", "#c6dbef"]
    for k in range(pairs):
        cx, cy = col * k + col / 2, 156
        svg.circle(cx, cy, radius, stroke="#cccccc", dash="3,3")
        svg.line(cx - radius - 8, cy, cx + radius + 8, cy, stroke="#e0e0e0")
        svg.line(cx, cy - radius - 8, cx, cy + radius + 8, stroke="#e0e0e0")
        for p in reversed(range(len(positions))):
            a, b = positions[p][2 * k], positions[p][2 * k + 1]
            x, y = cx + a * radius, cy - b * radius
            svg.line(cx, cy, x, y, stroke=shades[p % len(shades)], width=2.2 if p == 0 else 1.6, arrow=True)
            if k < 2 or p in (0, len(positions) - 1):
                svg.text(cx + a * (radius + 13), cy - b * (radius + 13) + 4, p, 11, "middle",
                         fill=shades[p % len(shades)], weight="bold")
        svg.text(cx, 245, f"pair {k}: (x{2 * k}, x{2 * k + 1})", 12.5, "middle", weight="bold")
        svg.text(cx, 263, f"ω_{k} = {freqs[k]:.4f}", 12.5, "middle", mono=True)
        svg.text(cx, 281, f"{math.degrees(freqs[k]):.1f}° per position", 12, "middle", fill="#444444")
    svg.text(20, 306, "Each pair keeps its length; only its angle changes. Fast pairs (left) tell near positions",
             12, italic=True, fill="#444444")
    svg.text(20, 322, "apart, slow ones (right) far ones.", 12, italic=True, fill="#444444")
    return svg.render()


# ---- chapter 12: masks -------------------------------------------------------------------------------------


def masks(data):
    recs = records(data)
    cases, cur = [], None
    for key, rest in recs:
        if key == "mask":
            cur = {"name": rest}
            cases.append(cur)
        else:
            cur[key] = rest
    svg = Svg(624)
    c = 34
    for n, case in enumerate(cases):
        nq, nk = [int(v) for v in case["size"].split()]
        w = nums(case["weights"])
        px = 40 + (n % 2) * 340
        py = 40 + (n // 2) * 290
        svg.text(px, py - 12, case["name"], 13.5, weight="bold")
        for i in range(nq):
            for j in range(nk):
                v = w[i * nk + j]
                x, y = px + 22 + j * c, py + 18 + i * c
                if v > 0:
                    shade = int(255 - 150 * v)
                    svg.rect(x, y, c, c, fill=f"#{shade:02x}{shade + (255 - shade) // 3:02x}ff", stroke="#777777")
                    svg.text(x + c / 2, y + c / 2 + 4, f"{v:.2f}".lstrip("0"), 11, "middle", mono=True)
                else:
                    svg.rect(x, y, c, c, fill="#eeeeee", stroke="#bbbbbb")
                    svg.text(x + c / 2, y + c / 2 + 4, "·", 12, "middle", fill=GREY)
        for j in range(nk):
            svg.text(px + 22 + j * c + c / 2, py + 12, j, 11, "middle", fill="#444444")
        for i in range(nq):
            label = i + (nk - nq)
            svg.text(px + 14, py + 18 + i * c + c / 2 + 4, label, 11, "end", fill="#444444")
    svg.text(20, 596, "Rows are queries, columns keys; the scores are all equal, so each row shares a weight of 1",
             12, italic=True, fill="#444444")
    svg.text(20, 612, "among the keys its mask allows. Grey keys get 0.", 12, italic=True, fill="#444444")
    return svg.render()


# ---- chapter 12: the tiles of causal tiled attention ---------------------------------------------------------


def tiles(data):
    recs = records(data)
    d = dict(recs)
    T = int(d["T"])
    bq, bk = [int(v) for v in d["tile"].split()]
    calls = [[int(v) for v in rest.split()] for key, rest in recs if key == "scores"]
    size = 400
    s = size / T
    x0, y0 = 50, 66
    svg = Svg(y0 + size + 60)
    svg.text(20, 24, f"causal tiled attention, T = {T}, tiles of {bq} queries × {bk} keys", 13.5, weight="bold")
    svg.text(20, 42, "the score products the forward handed to BLAS, as a GemmTrace recorded them", 12.5,
             fill="#444444")
    for qi in range(0, T, bq):
        for kj in range(0, T, bk):
            svg.rect(x0 + kj * s, y0 + qi * s, bk * s, bq * s, fill="#f3f3f3", stroke="#cccccc")
    # replay the trace: one query tile after the other, its key tiles left to right, up to the
    # last key it may see (causality: query i sees keys 0..i)
    i0, j0, n = 0, 0, 0
    for m, width in calls:
        svg.rect(x0 + j0 * s, y0 + i0 * s, width * s, m * s, fill="#9ecae1", stroke=BLUE, width=1.2)
        n += 1
        svg.text(x0 + (j0 + width / 2) * s, y0 + (i0 + m / 2) * s + 4, n, 11, "middle", fill=DARK)
        j0 += width
        if j0 >= min(T, i0 + m):
            i0, j0 = i0 + m, 0
    svg.line(x0, y0, x0 + size, y0 + size, stroke=RED, width=1.5, dash="5,4")
    svg.rect(x0, y0, size, size, stroke=DARK)
    svg.text(x0 + size / 2, y0 - 6, f"keys 0 .. {T - 1}", 11.5, "middle", fill="#444444")
    svg.add(f'<text x="{x0 - 10}" y="{y0 + size / 2:.1f}" font-size="11.5" text-anchor="middle" fill="#444444" '
            f'transform="rotate(-90 {x0 - 10} {y0 + size / 2:.1f})" {FONT}>queries 0 .. {T - 1}</text>')
    full = sum(1 for m, w in calls if w == bk)
    lx = x0 + size + 24
    svg.text(lx, y0 + 20, f"{len(calls)} score products", 13, weight="bold")
    svg.text(lx, y0 + 40, f"of {(T // bq) * (T // bk)} tiles; {full} full,", 12.5)
    svg.text(lx, y0 + 58, f"{len(calls) - full} cut at the diagonal", 12.5)
    svg.text(lx, y0 + 90, "grey: above the diagonal,", 12.5, fill="#444444")
    svg.text(lx, y0 + 108, "never computed", 12.5, fill="#444444")
    svg.text(lx, y0 + 140, "numbers: the order", 12.5, fill="#444444")
    svg.text(lx, y0 + 158, "of the products", 12.5, fill="#444444")
    svg.text(lx, y0 + 190, "red: query i sees", 12.5, fill=RED)
    svg.text(lx, y0 + 208, "keys 0 .. i", 12.5, fill=RED)
    svg.text(20, y0 + size + 36, "Each blue block is one (queries x dh) · (dh x keys) GEMM, then one P·v GEMM; "
                                 "no (T, T) matrix is ever held.", 12, italic=True, fill="#444444")
    return svg.render()


# ---- chapter 16: the Gram volume ---------------------------------------------------------------------------


def gram(data):
    recs = records(data)
    d = dict(recs)
    q, r = nums(d["q"]), nums(d["r"])
    keys, cur = [], None
    for key, rest in recs:
        if key == "key":
            cur = {"name": rest}
            keys.append(cur)
        elif cur is not None and key in ("k", "det", "height2"):
            cur[key] = rest
    ox, oy, scale = 60, 330, 82

    def proj(v):  # oblique projection: x right, y into the page (up-right), z up
        x, y, z = v
        return ox + scale * (x + 0.6 * y), oy - scale * (0.5 * y + z)

    svg = Svg(400)
    svg.text(20, 24, "det G(q, k, r) = (area of the q, r parallelogram)² × (height of k above its plane)²",
             13.5, weight="bold")
    o = (0.0, 0.0, 0.0)
    qr = [a + b for a, b in zip(q, r)]
    svg.polygon([proj(o), proj(q), proj(qr), proj(r)], fill="#c6dbef", opacity=0.8)
    for v, name, colour in ((q, "q", BLUE), (r, "r", GREEN)):
        (x1, y1), (x2, y2) = proj(o), proj(v)
        svg.line(x1, y1, x2, y2, stroke=colour, width=2.2, arrow=True)
        svg.text(x2 + 8, y2 + 5 if name == "q" else y2 - 6, name, 14, weight="bold", fill=colour)
    colours = ["#6a3d9a", "#e6550d", RED]
    for n, key in enumerate(keys):
        k = nums(key["k"])
        (x1, y1), (x2, y2) = proj(o), proj(k)
        svg.line(x1, y1, x2, y2, stroke=colours[n], width=2, arrow=True)
        foot = (k[0], k[1], 0.0)
        if abs(k[2]) > 1e-12:
            (fx, fy) = proj(foot)
            svg.line(x2, y2, fx, fy, stroke=colours[n], width=1.2, dash="4,3")
            svg.circle(fx, fy, 2.5, fill=colours[n], stroke=colours[n])
        svg.text(x2 + 6, y2 - 4, f"k{n + 1}", 13, weight="bold", fill=colours[n])
        ty = 70 + n * 62
        svg.text(440, ty, f"k{n + 1} {key['name']}", 13, weight="bold", fill=colours[n])
        svg.text(440, ty + 18, f"height² = {float(key['height2']):.4f}", 12.5, mono=True)
        svg.text(440, ty + 36, f"det G = {float(key['det']):.4f}", 12.5, mono=True)
    svg.text(440, 270, f"area² = qq·rr − rq² = {float(d['area2']):.4f}", 12.5, mono=True)
    svg.text(440, 292, "score = −det G · d_h^−1.5", 12.5, mono=True)
    svg.text(20, 384, "A key in the plane of q and r scores 0, the best possible; its part along the plane "
                      "does not matter at all.", 12, italic=True, fill="#444444")
    return svg.render()


# ---- chapter 19: BPE merges ---------------------------------------------------------------------------------


def bpe(data):
    steps = []
    for key, rest in records(data):
        parts = rest.split(" ")
        if key == "start":
            steps.append(("the bytes", parts))
        else:
            left, right = parts[0], parts[1]
            steps.append((f"{left} + {right} → {left}{right}", parts[3:]))
    row_h, char_w = 58, 9.0
    svg = Svg(66 + row_h * len(steps))
    svg.text(20, 24, "byte-level BPE trained on \"low\" ×5, \"lower\" ×2, \"widest\" ×3, \"newest\" ×6",
             13.5, weight="bold")
    svg.text(20, 44, "each merge joins the most frequent adjacent pair (ties: the greater pair); "
                     "_ is a word's leading space", 12, fill="#444444")
    for n, (label, words) in enumerate(steps):
        y = 58 + n * row_h
        svg.text(20, y + 14, f"merge {n}: {label}" if n else "before any merge: the bytes", 12.5, mono=True,
                 weight="bold")
        x = 20
        for word in words:
            count, pieces = word.split("x", 1)
            for piece in pieces.split("|"):
                w = char_w * len(piece) + 6
                svg.rect(x, y + 21, w, 24, fill=PALETTE[(len(piece) - 1) % len(PALETTE)], stroke="#777777", rx=3)
                svg.text(x + w / 2, y + 38, piece, 12.5, "middle", mono=True)
                x += w + 2
            svg.text(x + 3, y + 38, f"×{count}", 11, fill="#444444")
            x += 30
    return svg.render()


# ---- plots: axes, lines, markers and legends for the figures below ------------------------------------------

PURPLE, ORANGE = "#9467bd", "#e6550d"
SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def pow10(k):
    return "1" if k == 0 else "10" + str(k).translate(SUPERSCRIPT)


# Advance widths (in em) of DejaVu Sans, the figures' font, for the characters 32..126, read from
# DejaVuSans.ttf's hmtx table; other characters count as 0.84 em (the widest of those the figures use).
SANS_WIDTHS = [float(v) for v in """
0.318 0.401 0.460 0.838 0.636 0.950 0.780 0.275 0.390 0.390 0.500 0.838 0.318 0.361 0.318 0.337 0.636
0.636 0.636 0.636 0.636 0.636 0.636 0.636 0.636 0.636 0.337 0.337 0.838 0.838 0.838 0.531 1.000 0.684
0.686 0.698 0.770 0.632 0.575 0.775 0.752 0.295 0.295 0.656 0.557 0.863 0.748 0.787 0.603 0.787 0.695
0.635 0.611 0.732 0.684 0.989 0.685 0.611 0.685 0.390 0.337 0.390 0.838 0.500 0.500 0.613 0.635 0.550
0.635 0.615 0.352 0.635 0.634 0.278 0.278 0.579 0.278 0.974 0.634 0.612 0.635 0.635 0.411 0.521 0.392
0.634 0.592 0.818 0.592 0.592 0.525 0.636 0.337 0.636 0.838
""".split()]


def text_width(s, size, mono=False, bold=False):
    """How wide DejaVu Sans (or Mono) draws S at SIZE px: the check that no label leaves the figure. A
    browser without DejaVu falls back to a narrower font (Arial, Helvetica), so this is an upper bound."""
    if mono:
        return len(str(s)) * size * 0.602
    em = sum(SANS_WIDTHS[ord(ch) - 32] if 32 <= ord(ch) < 127 else 0.84 for ch in str(s))
    return em * size * (1.12 if bold else 1.0)


class Plot(Svg):
    """An Svg whose every text is checked to lie inside the box and to be at least 11 px."""

    def text(self, x, y, s, size=13, anchor="start", mono=False, weight="normal", fill=DARK, italic=False,
             rotate=None):
        if size < 11:
            raise ValueError(f"text {s!r} of {size} px: the figures keep text at 11 px or more")
        w = text_width(s, size, mono, weight == "bold")
        if rotate is None:
            left = x - {"start": 0, "middle": w / 2, "end": w}[anchor]
            if left < 0 or left + w > self.w or y - size < 0 or y + 0.25 * size > self.h:
                raise ValueError(f"text {s!r} at ({x:.0f}, {y:.0f}) leaves the {self.w}x{self.h} figure")
            return super().text(x, y, s, size, anchor, mono, weight, fill, italic)
        if y - w / 2 < 0 or y + w / 2 > self.h or x - size < 0:
            raise ValueError(f"text {s!r} at ({x:.0f}, {y:.0f}) leaves the figure")
        style = ' font-style="italic"' if italic else ""
        self.add(f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" font-weight="{weight}" '
                 f'fill="{fill}"{style} transform="rotate({rotate} {x:.1f} {y:.1f})" {MONO if mono else FONT}>'
                 f'{escape(str(s))}</text>')

    def path(self, d, stroke=DARK, width=1.0, dash=None, fill="none", clip=None, opacity=None):
        ds = f' stroke-dasharray="{dash}"' if dash else ""
        cp = f' clip-path="url(#{clip})"' if clip else ""
        op = f' fill-opacity="{opacity}"' if opacity is not None else ""
        self.add(f'<path d="{d}" fill="{fill}" stroke="{stroke}" stroke-width="{width}"{ds}{cp}{op}/>')

    def marker(self, x, y, kind, colour, r=4.0, fill=None):
        fill = colour if fill is None else fill
        if kind == "circle":
            self.circle(x, y, r, fill=fill, stroke=colour)
        elif kind == "square":
            self.rect(x - r * 0.85, y - r * 0.85, 1.7 * r, 1.7 * r, fill=fill, stroke=colour)
        elif kind == "triangle":
            self.add(f'<polygon points="{x:.1f},{y - 1.15 * r:.1f} {x + r:.1f},{y + 0.75 * r:.1f} '
                     f'{x - r:.1f},{y + 0.75 * r:.1f}" fill="{fill}" stroke="{colour}"/>')
        elif kind == "diamond":
            self.add(f'<polygon points="{x:.1f},{y - 1.2 * r:.1f} {x + r:.1f},{y:.1f} {x:.1f},{y + 1.2 * r:.1f} '
                     f'{x - r:.1f},{y:.1f}" fill="{fill}" stroke="{colour}"/>')
        elif kind == "cross":
            self.line(x - r, y - r, x + r, y + r, stroke=colour, width=2)
            self.line(x - r, y + r, x + r, y - r, stroke=colour, width=2)
        elif kind == "star":
            pts = []
            for i in range(10):
                a = math.pi / 2 + i * math.pi / 5
                rr = 1.3 * r if i % 2 == 0 else 0.55 * r
                pts.append(f"{x + rr * math.cos(a):.1f},{y - rr * math.sin(a):.1f}")
            self.add(f'<polygon points="{" ".join(pts)}" fill="{fill}" stroke="{colour}"/>')

    def legend(self, x, y, entries, size=12, row=19, columns=1, column_width=0):
        """ENTRIES: (label, colour, dash, marker); a short sample of the line, then its label."""
        for i, (label, colour, dash, kind) in enumerate(entries):
            cx, cy = x + (i % columns) * column_width, y + (i // columns) * row
            if dash != "none":
                self.line(cx, cy - 4, cx + 30, cy - 4, stroke=colour, width=2, dash=dash)
            if kind:
                self.marker(cx + 15, cy - 4, kind, colour)
            self.text(cx + 38, cy, label, size)


class Axes:
    """A rectangle of the figure mapped to data coordinates, linear or log10 on each axis."""
    count = 0

    def __init__(self, svg, x, y, w, h, xlim, ylim, xlog=False, ylog=False):
        self.svg, self.x, self.y, self.w, self.h = svg, x, y, w, h
        self.xlim, self.ylim, self.xlog, self.ylog = xlim, ylim, xlog, ylog
        Axes.count += 1
        self.clip = f"clip{Axes.count}"
        svg.add(f'<clipPath id="{self.clip}"><rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}"/>'
                f'</clipPath>')

    def _frac(self, v, lim, log):
        if log:
            return (math.log10(v) - math.log10(lim[0])) / (math.log10(lim[1]) - math.log10(lim[0]))
        return (v - lim[0]) / (lim[1] - lim[0])

    def X(self, v):
        return self.x + self.w * self._frac(v, self.xlim, self.xlog)

    def Y(self, v):
        return self.y + self.h * (1 - self._frac(v, self.ylim, self.ylog))

    def frame(self, xticks, yticks, xlabel, ylabel, xfmt=fmt, yfmt=fmt, grid=True, size=12):
        s = self.svg
        for v in xticks:
            X = self.X(v)
            if grid:
                s.line(X, self.y, X, self.y + self.h, stroke="#e6e6e6")
            s.line(X, self.y + self.h, X, self.y + self.h + 4, stroke=DARK)
            s.text(X, self.y + self.h + 17, xfmt(v), size, "middle")
        for v in yticks:
            Y = self.Y(v)
            if grid:
                s.line(self.x, Y, self.x + self.w, Y, stroke="#e6e6e6")
            s.line(self.x - 4, Y, self.x, Y, stroke=DARK)
            s.text(self.x - 7, Y + 4, yfmt(v), size, "end")
        s.rect(self.x, self.y, self.w, self.h, stroke="#555555")
        if xlabel:
            s.text(self.x + self.w / 2, self.y + self.h + 36, xlabel, 12.5, "middle")
        if ylabel:
            s.text(self.ylabel_x, self.y + self.h / 2, ylabel, 12.5, "middle", rotate=-90)

    ylabel_x = 16

    def polyline(self, xs, ys, colour, width=1.8, dash=None):
        pts = [(self.X(a), self.Y(b)) for a, b in zip(xs, ys)]
        if len(pts) < 2:
            return
        d = "M " + " L ".join(f"{a:.1f} {b:.1f}" for a, b in pts)
        self.svg.path(d, stroke=colour, width=width, dash=dash, clip=self.clip)

    def markers(self, xs, ys, kind, colour, r=4.0, fill=None):
        for a, b in zip(xs, ys):
            X, Y = self.X(a), self.Y(b)
            if self.x - 0.5 <= X <= self.x + self.w + 0.5 and self.y - 0.5 <= Y <= self.y + self.h + 0.5:
                self.svg.marker(X, Y, kind, colour, r, fill)


# ---- chapter 4: the error of a central difference against eps ---------------------------------------------------


def fd_error(data):
    recs = records(data)
    u = {rest.split()[0]: float(rest.split()[1]) for key, rest in recs if key == "u"}
    rows = [nums(rest) for key, rest in recs if key == "eps"]
    eps = [r[0] for r in rows]
    e = math.e
    svg = Plot(480)
    svg.text(20, 24, "error of (f(x + ε) − f(x − ε)) / 2ε against f′(x), for f = exp at x = 1", 13.5,
             weight="bold")
    ax = Axes(svg, 78, 44, 600, 300, (1e-13, 1.0), (1e-13, 10.0), xlog=True, ylog=True)
    ax.ylabel_x = 20
    ax.frame([10.0 ** k for k in range(-13, 1)], [10.0 ** k for k in range(-13, 2, 2)],
             "ε (the step, log scale)", "absolute error (log scale)",
             xfmt=lambda v: pow10(round(math.log10(v))), yfmt=lambda v: pow10(round(math.log10(v))), size=11)
    # the two terms of the error model: truncation e ε²/6, rounding u |f| / ε
    grid = [10.0 ** (k / 8) for k in range(-104, 1)]
    ax.polyline(grid, [e * x * x / 6 for x in grid], GREY, 1.4, "2,3")
    for dtype in ("float64", "float32"):
        ax.polyline(grid, [u[dtype] * e / x for x in grid], GREY, 1.4, "7,3,2,3")
    for col, colour, dash, kind in ((1, BLUE, None, "circle"), (2, RED, "6,3", "square")):
        xs = [r[0] for r in rows if r[col] > 0]
        ys = [r[col] for r in rows if r[col] > 0]
        ax.polyline(xs, ys, colour, 2.0, dash)
        ax.markers(xs[::4], ys[::4], kind, colour, 3.5)
    X = ax.X(1e-6)
    svg.line(X, ax.y, X, ax.y + ax.h, stroke=DARK, width=1.2, dash="3,3")
    svg.text(X + 5, ax.y + 14, "gradcheck's ε = 10⁻⁶", 12)
    svg.text(ax.X(6e-7), ax.Y(1.5e-12), "truncation ε²e/6", 12, "end", fill="#555555")
    svg.text(ax.X(3e-12) + 4, ax.Y(6e-5), "rounding u·e/ε, float64", 12, fill="#555555")
    svg.text(ax.X(1.0) - 4, ax.Y(1.5e-8), "rounding u·e/ε, float32", 12, "end", fill="#555555")
    svg.legend(78, 398, [("float64 (ropegrad's ops)", BLUE, None, "circle"),
                         ("float32 (the same ops)", RED, "6,3", "square"),
                         ("model: truncation", GREY, "2,3", None), ("model: rounding", GREY, "7,3,2,3", None)],
               columns=2, column_width=300)
    svg.text(20, 448, "float64's valley spans 10⁻⁶ to 10⁻⁴, errors 10⁻¹¹ to 10⁻⁹; float32's best ε is near 3·10⁻³,",
             12, italic=True, fill="#444444")
    svg.text(20, 466, "its error 10⁶ times larger; below 6·10⁻⁸ its two evaluations round to the same float (error e).",
             12, italic=True, fill="#444444")
    return svg.render()


# ---- chapter 5: the initial weights ----------------------------------------------------------------------------


def init(data):
    recs = records(data)
    weights, cur = [], None
    for key, rest in recs:
        if key == "weight":
            cur = {"name": rest}
            weights.append(cur)
        else:
            cur[key] = rest
    svg = Plot(400)
    svg.text(20, 24, "ropegrad's initial weights: N(0, σ²) cut at ±3σ (histograms, log scale)", 13.5, weight="bold")
    for i, w in enumerate(weights):
        sigma, n = float(w["sigma"]), int(w["numel"])
        counts = [int(c) for c in w["counts"].split()]
        ax = Axes(svg, 68 + i * 330, 60, 274, 240, (-4 * sigma, 4 * sigma), (1e-4 / sigma, 1.0 / sigma), ylog=True)
        ax.ylabel_x = 22 + i * 330
        xt = [k * sigma for k in range(-3, 4)]
        ax.frame(xt, [10.0 ** k / sigma for k in range(-4, 1)], "weight value w", "density × σ",
                 xfmt=lambda v, s=sigma: "0" if abs(v) < 1e-12 else f"{v / s:+.0f}σ".replace("-", "−"),
                 yfmt=lambda v, s=sigma: pow10(round(math.log10(v * s))), size=11)
        width = 0.1 * sigma
        # the histogram: a bar per bin, empty bins left out (beyond the cut)
        for b, c in enumerate(counts):
            if c == 0:
                continue
            lo = (-4 + b * 0.1) * sigma
            dens = c / (n * width)
            x0, x1, y = ax.X(lo), ax.X(lo + width), ax.Y(dens)
            svg.rect(x0, y, x1 - x0, ax.y + ax.h - y, fill="#c6dbef", stroke=BLUE, width=0.6)
        # the normal density before the cut, and the cut
        xs = [k / 50 * sigma for k in range(-200, 201)]
        ax.polyline(xs, [math.exp(-0.5 * (x / sigma) ** 2) / (sigma * math.sqrt(2 * math.pi)) for x in xs], RED, 1.8,
                    "5,3")
        for s in (-3, 3):
            svg.line(ax.X(s * sigma), ax.y, ax.X(s * sigma), ax.y + ax.h, stroke=DARK, width=1.2, dash="2,2")
        lo, hi = (float(v) for v in w["range"].split())
        svg.text(ax.x + ax.w / 2, 50, w["name"], 12.5, "middle", mono=True, weight="bold")
        svg.text(ax.x + ax.w / 2, ax.y + ax.h + 52, f"σ = {sigma:.6g}; measured std {float(w['std']) / sigma:.5f}σ",
                 12, "middle")
        svg.text(ax.x + ax.w / 2, ax.y + ax.h + 68, f"{n:,} weights, all in [{lo:.3f}σ, {hi:.3f}σ]", 12, "middle")
    svg.legend(90, 394, [("histogram of the weights", BLUE, "none", "square"),
                         ("N(0, σ²) before the cut", RED, "5,3", None)], columns=2, column_width=290)
    return svg.render()


# ---- chapter 8: SiLU and its derivative ---------------------------------------------------------------------------


def silu_plot(data):
    d = dict(records(data))
    z = nums(d["z"])
    gelu = [x * 0.5 * (1 + math.erf(x / math.sqrt(2))) for x in z]
    dgelu = [0.5 * (1 + math.erf(x / math.sqrt(2))) + x * math.exp(-x * x / 2) / math.sqrt(2 * math.pi) for x in z]
    svg = Plot(420)
    svg.text(20, 24, "SiLU against ReLU and GELU, and the derivatives backward() computes", 13.5, weight="bold")
    panels = [("activation", [("SiLU(z) = z σ(z)", nums(d["silu"]), BLUE, None, "circle"),
                              ("ReLU(z)", nums(d["relu"]), RED, "7,3", "square"),
                              ("GELU(z) = z Φ(z)", gelu, GREEN, "2,3", "triangle")], (-1.0, 4.0), [-1, 0, 1, 2, 3, 4]),
              ("derivative", [("SiLU′(z), by backward()", nums(d["dsilu"]), BLUE, None, "circle"),
                              ("ReLU′(z)", nums(d["drelu"]), RED, "7,3", "square"),
                              ("GELU′(z)", dgelu, GREEN, "2,3", "triangle"),
                              ("σ(z): SiLU′ without z σ(1 − σ)", nums(d["sigmoid"]), DARK, "9,3,2,3", "diamond")],
               (-0.2, 1.2), [-0.2, 0, 0.2, 0.4, 0.6, 0.8, 1.0, 1.2])]
    for i, (name, curves, ylim, yt) in enumerate(panels):
        ax = Axes(svg, 62 + i * 335, 44, 275, 250, (-4.0, 4.0), ylim)
        ax.ylabel_x = 18 + i * 335
        ax.frame([-4, -2, 0, 2, 4], yt, "z (the pre-activation, W₁x)", name, yfmt=lambda v: f"{v:g}", size=11)
        svg.line(ax.X(-4), ax.Y(0), ax.X(4), ax.Y(0), stroke="#aaaaaa")
        for label, ys, colour, dash, kind in curves:
            ax.polyline(z, ys, colour, 2.0, dash)
            sel = [k for k in range(len(z)) if abs(z[k] * 2 - round(z[k] * 2)) < 1e-9 and abs(z[k]) <= 4]
            ax.markers([z[k] for k in sel[::2]], [ys[k] for k in sel[::2]], kind, colour, 3.2)
        svg.legend(ax.x + 2, 346, [(c[0], c[2], c[3], c[4]) for c in curves], size=11.5, row=17)
    silu = nums(d["silu"])
    k = min(range(len(z)), key=lambda j: silu[j])
    ax0 = Axes(svg, 62, 44, 275, 250, (-4.0, 4.0), (-1.0, 4.0))
    svg.text(ax0.X(z[k]) - 2, ax0.Y(silu[k]) + 20, f"minimum ≈ {silu[k]:.3f} near z = {z[k]:.2f}", 11, "middle")
    return svg.render()


# ---- chapter 13: the learning-rate schedule ------------------------------------------------------------------------


def schedule(data):
    recs = records(data)
    lr_max, lr_min, tw, tc, last = nums(dict(recs)["run"])
    pts = [nums(rest) for key, rest in recs if key == "lr"]
    ts, lrs = [p[0] for p in pts], [p[1] for p in pts]
    svg = Plot(390)
    svg.text(20, 24, f"cosine_lr(t, lr_max = {lr_max:g}, lr_min = {lr_min:g}, Tw = {tw:g}, Tc = {tc:g}), every step",
             13.5, weight="bold")
    ax = Axes(svg, 70, 50, 600, 240, (0, last), (0, 1.1))
    ax.frame(list(range(0, int(last) + 1, 5)) + [int(tw), int(tc)], [0, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0],
             "step t", "learning rate η_t", size=11)
    for lo, hi, fill, label in ((0, tw, "#fff1c1", "warmup: t/Tw · lr_max"),
                                (tw, tc, "#dfe7fd", "cosine from lr_max to lr_min"),
                                (tc, last, "#e2ece9", "lr_min")):
        svg.rect(ax.X(lo), ax.y, ax.X(hi) - ax.X(lo), ax.h, fill=fill, stroke="none")
        svg.text((ax.X(lo) + ax.X(hi)) / 2, ax.y + 16, label, 12, "middle")
    ax.frame([], [], "", "")
    for v, name in ((lr_max, "lr_max"), (lr_min, "lr_min")):
        svg.line(ax.x, ax.Y(v), ax.x + ax.w, ax.Y(v), stroke=GREY, dash="4,3")
    ax.polyline(ts, lrs, BLUE, 2.0)
    ax.markers(ts, lrs, "circle", BLUE, 3.5)
    for t in (3, 10, 14):
        i = ts.index(t)
        svg.text(ax.X(t) + 6, ax.Y(lrs[i]) + 16 if t == 3 else ax.Y(lrs[i]) - 8, f"{lrs[i]:.6f}", 11)
    svg.text(20, 360, "The warmup rises linearly from 0 and reaches lr_max exactly at t = Tw; the cosine then", 12,
             italic=True, fill="#444444")
    svg.text(20, 378, "falls to lr_min at t = Tc, where it stays. The numbers are those the chapter's output shows.",
             12, italic=True, fill="#444444")
    return svg.render()


# ---- chapter 17: the FLOP shares against the context -----------------------------------------------------------------


def flop_shares(data):
    recs = records(data)
    runs = {}
    for key, rest in recs:
        if key in ("small", "xl"):
            v = nums(rest)
            runs.setdefault(key, []).append(v)
    svg = Plot(450)
    svg.text(20, 24, "share of a forward pass's matmul FLOPs, by part, as the context T grows (batch 1)", 13.5,
             weight="bold")
    series = [("q, k, v and output projections", lambda r: r[2], BLUE, None, "circle"),
              ("attention products QKᵀ and PV", lambda r: r[3] + r[4], RED, "7,3", "square"),
              ("feed-forward (SwiGLU)", lambda r: r[5], GREEN, "9,3,2,3", "triangle"),
              ("lm_head", lambda r: r[6], PURPLE, "2,3", "diamond")]
    for i, (size, title) in enumerate((("small", "GPT-2 small's shape: D 768, 12 layers"),
                                       ("xl", "GPT-2 XL's shape: D 1600, 48 layers"))):
        rows = runs[size]
        ts = [r[0] for r in rows]
        ax = Axes(svg, 66 + i * 330, 62, 268, 250, (ts[0], ts[-1]), (0, 1), xlog=True)
        ax.ylabel_x = 20 + i * 330
        ax.frame([2 ** k for k in range(7, 18, 2)], [0, 0.2, 0.4, 0.6, 0.8, 1.0], "context T (tokens, log scale)",
                 "share of forward FLOPs" if i == 0 else "",
                 xfmt=lambda v: f"{v / 1024:g}K" if v >= 1024 else f"{v:g}", yfmt=lambda v: f"{v * 100:.0f}%",
                 size=11)
        svg.text(ax.x + ax.w / 2, 52, title, 12.5, "middle", weight="bold")
        X = ax.X(1024)
        svg.line(X, ax.y, X, ax.y + ax.h, stroke=DARK, dash="3,3")
        svg.text(X + 4, ax.y + 14, "T = 1024", 11)
        for name, f, colour, dash, kind in series:
            ys = [f(r) for r in rows]
            ax.polyline(ts, ys, colour, 2.0, dash)
            ax.markers(ts, ys, kind, colour, 3.4)
    svg.legend(80, 372, [(s[0], s[2], s[3], s[4]) for s in series], columns=2, column_width=310)
    svg.text(20, 418, "The projections and the feed-forward grow like T D², the attention products like T² D: past a",
             12, italic=True, fill="#444444")
    svg.text(20, 436, "few thousand tokens they take over, sooner in the narrow small model than in XL.", 12,
             italic=True, fill="#444444")
    return svg.render()


# ---- chapter 6: an embedding's forward and backward ----------------------------------------------------------


def embedding_figure(data):
    d = dict(records(data))
    table, ids, out = nums(d["table"]), [int(v) for v in nums(d["ids"])], nums(d["out"])
    grad_out, grad_table = nums(d["grad_out"]), nums(d["grad_table"])
    V, D, N = len(table) // 3, 3, len(ids)
    svg = Plot(490)
    c, h = 40, 28  # a cell
    lx, rx = 70, 450  # the table's left edge, the positions' left edge
    svg.text(20, 24, "embedding(ids = [[1, 3], [1, 1]], E): forward copies rows, backward adds them back", 13.5,
             weight="bold")
    colours = {1: "#dfe7fd", 3: "#fde2e4"}

    def rows(x, y, values, labels, fills, title, note=None):
        svg.text(x + 1.5 * c, y - 10, title, 12.5, "middle", weight="bold", mono=True)
        for r, label in enumerate(labels):
            svg.text(x - 8, y + r * h + 19, label, 12, "end", mono=True, fill="#444444")
            for j in range(D):
                svg.rect(x + j * c, y + r * h, c, h, fill=fills[r], stroke="#777777")
                svg.text(x + j * c + c / 2, y + r * h + 19, fmt(values[r * D + j]), 12, "middle", mono=True)
        if note:
            svg.text(x + 1.5 * c, y + len(labels) * h + 18, note, 11.5, "middle", fill="#444444")

    # forward
    fy = 64
    svg.text(20, fy - 20 + 0, "forward", 13, weight="bold", fill=BLUE)
    rows(lx, fy + 10, table, [f"row {v}" for v in range(V)], [colours.get(v, "#ffffff") for v in range(V)],
         "E (5, 3)")
    rows(rx, fy + 10 + h // 2, out, [f"n={n}, id {ids[n]}" for n in range(N)], [colours[i] for i in ids],
         "out (2, 2, 3)", "ids flattened: n = 0 .. 3")
    for n, v in enumerate(ids):
        svg.line(lx + 3 * c + 4, fy + 10 + v * h + h / 2, rx - 80, fy + 10 + h // 2 + n * h + h / 2, stroke=BLUE,
                 width=1.4, arrow=True)
    # backward
    by = 270
    svg.line(20, by - 40, 680, by - 40, stroke="#cccccc")
    svg.text(20, by - 16, "backward of L = Σ out · c (the gradient reaching position n is n + 1)", 13, weight="bold",
             fill=RED)
    rows(lx, by + 10, grad_table, [f"row {v}" for v in range(V)], [colours.get(v, "#ffffff") for v in range(V)],
         "E.grad (5, 3)", "rows never read: 0")
    rows(rx, by + 10 + h // 2, grad_out, [f"n={n}, id {ids[n]}" for n in range(N)], [colours[i] for i in ids],
         "grad of out")
    for n, v in enumerate(ids):
        svg.line(rx - 80, by + 10 + h // 2 + n * h + h / 2, lx + 3 * c + 4, by + 10 + v * h + h / 2, stroke=RED,
                 width=1.4, dash="6,3", arrow=True)
    svg.text(20, by + 10 + 5 * h + 44, f"Row 1 was read at n = 0, 2 and 3, so it receives 1 + 3 + 4 = "
                                       f"{grad_table[3]:g} in each column; row 3 (n = 1) receives "
                                       f"{grad_table[9]:g}.", 12, italic=True, fill="#444444")
    return svg.render()


# ---- chapter 7: RMSNorm in two dimensions ------------------------------------------------------------------------


def rmsnorm_figure(data):
    d = dict(records(data))
    gain = nums(d["gain"])
    panels = [("rows x", nums(d["x"])), ("rms_norm(x, g = (1, 1))", nums(d["y"])),
              (f"rms_norm(x, g = ({gain[0]:g}, {gain[1]:g}))", nums(d["y_gain"]))]
    n = len(panels[0][1]) // 2
    colours = [BLUE, RED, GREEN, PURPLE, ORANGE, "#17becf", "#8c564b", "#e377c2"]
    kinds = ["circle", "square", "triangle", "diamond"]
    svg = Plot(386)
    svg.text(20, 24, "RMSNorm of 2-D rows: every row is rescaled to RMS 1, i.e. onto the circle of radius √D", 13.5,
             weight="bold")
    size, lim = 196, 3.2
    for p, (title, v) in enumerate(panels):
        ax = Axes(svg, 40 + p * 224, 70, size, size, (-lim, lim), (-lim, lim))
        svg.text(ax.x + size / 2, 58, title, 12, "middle", mono=True, weight="bold")
        ax.frame([-3, 0, 3], [-3, 0, 3], "", "", size=11)
        svg.line(ax.X(-lim), ax.Y(0), ax.X(lim), ax.Y(0), stroke="#cccccc")
        svg.line(ax.X(0), ax.Y(-lim), ax.X(0), ax.Y(lim), stroke="#cccccc")
        r = math.sqrt(2)
        if p >= 1:
            svg.circle(ax.X(0), ax.Y(0), ax.X(r) - ax.X(0), stroke=GREY, width=1.2, dash="4,3")
        if p == 2:
            svg.add(f'<ellipse cx="{ax.X(0):.1f}" cy="{ax.Y(0):.1f}" rx="{ax.X(gain[0] * r) - ax.X(0):.1f}" '
                    f'ry="{ax.X(gain[1] * r) - ax.X(0):.1f}" fill="none" stroke="{DARK}" stroke-width="1.2" '
                    f'stroke-dasharray="2,2"/>')
        for i in range(n - 1):
            x, y = v[2 * i], v[2 * i + 1]
            svg.line(ax.X(0), ax.Y(0), ax.X(x), ax.Y(y), stroke=colours[i], width=1.2)
            svg.marker(ax.X(x), ax.Y(y), kinds[i % 4], colours[i], 4.2)
        x, y = v[-2], v[-1]
        svg.marker(ax.X(x), ax.Y(y), "star", DARK, 5)
    svg.text(40 + 224 + size / 2, 70 + size + 32, "dashed: the circle of radius √2", 11.5, "middle", fill="#444444")
    svg.text(40 + 448 + size / 2, 70 + size + 32, "dotted: that circle stretched by g", 11.5, "middle",
             fill="#444444")
    svg.marker(30, 334, "star", DARK, 5)
    tiny = panels[1][1][-2:]
    svg.text(42, 338, f"a tiny row, x = (0.002, 0.001): mean(x²) = 2.5·10⁻⁶ is small against ε = 10⁻⁵, so it lands "
                      f"inside,", 12)
    svg.text(42, 356, f"at ({tiny[0]:.3f}, {tiny[1]:.3f}), radius {math.hypot(*tiny):.3f}: ε keeps it from being "
                      f"blown up onto the circle.", 12)
    svg.text(20, 378, "Each colour and marker is one row, in all three panels: its direction never changes.", 12,
             italic=True, fill="#444444")
    return svg.render()


# ---- chapter 10: scores against both positions ------------------------------------------------------------------


def rope_scores(data):
    d = dict(records(data))
    n = int(d["positions"])
    maps = [("RoPE: q e^(imω) · k e^(inω)", nums(d["rope"])),
            ("the recipe: q e^(imω) · k e^(−inω)", nums(d["conjugate"]))]
    top = max(abs(v) for _, m in maps for v in m)
    top = math.ceil(top)
    svg = Plot(420)
    svg.text(20, 24, f"the score of q at position m and k at position n, m, n = 0 .. {n - 1} (d_h = 64)", 13.5,
             weight="bold")
    cell = 5
    for p, (title, m) in enumerate(maps):
        x0, y0 = 62 + p * 300, 62
        svg.text(x0 + n * cell / 2, 52, title, 12.5, "middle", weight="bold")
        # 17 shades, one path of squares per shade (a rect per cell would be 4 times the bytes)
        cells = {}
        for i in range(n):
            for j in range(n):
                level = max(-LEVELS, min(LEVELS, round(m[i * n + j] / top * LEVELS)))
                cells.setdefault(level, []).append(f"M{x0 + j * cell} {y0 + i * cell}h{cell}v{cell}h-{cell}z")
        for level in sorted(cells):
            svg.add(f'<path d="{"".join(cells[level])}" fill="{colour_of(level / LEVELS * top, top)}"/>')
        svg.rect(x0, y0, n * cell, n * cell, stroke="#555555")
        for t in range(0, n, 8):
            svg.text(x0 + t * cell + cell / 2, y0 + n * cell + 15, t, 11, "middle")
            svg.text(x0 - 5, y0 + t * cell + cell / 2 + 4, t, 11, "end")
        svg.text(x0 + n * cell / 2, y0 + n * cell + 32, "key position n", 12, "middle")
        svg.text(x0 - 30, y0 + n * cell / 2, "query position m", 12, "middle", rotate=-90)
        # a line of constant m - n (left) or m + n (right)
        if p == 0:
            svg.line(x0, y0 + 10 * cell, x0 + (n - 10) * cell, y0 + n * cell, stroke=DARK, width=1.3, dash="4,3")
            note = "constant along m − n = const (dashed)"
        else:
            svg.line(x0, y0 + 30 * cell, x0 + 30 * cell, y0, stroke=DARK, width=1.3, dash="4,3")
            note = "constant along m + n = const (dashed)"
        svg.text(x0 + n * cell / 2, y0 + n * cell + 50, note, 12, "middle", fill="#444444")
    # colour scale
    bx, by, bw = 630, 62, 14
    steps, step_h = 2 * LEVELS + 1, 14
    for k in range(steps):
        v = top * (LEVELS - k) / LEVELS
        svg.add(f'<rect x="{bx}" y="{by + k * step_h}" width="{bw}" height="{step_h}" fill="{colour_of(v, top)}"/>')
    svg.rect(bx, by, bw, steps * step_h, stroke="#555555")
    for v in (top, 0, -top):
        svg.text(bx + bw + 4, by + (1 - v / top) / 2 * (steps - 1) * step_h + step_h / 2 + 4,
                 f"{v:+g}".replace("-", "−") if v else "0", 11)
    svg.text(bx + bw / 2, by - 8, "score", 11, "middle")
    svg.text(20, 392, "RoPE's score depends on m − n only: each diagonal has one colour. Rotating the key by the", 12,
             italic=True, fill="#444444")
    svg.text(20, 410, "conjugate phase makes it depend on m + n: the absolute positions, what RoPE was meant to remove.",
             12, italic=True, fill="#444444")
    return svg.render()


LEVELS = 8  # shades on each side of 0 in the score maps


def colour_of(v, top):
    t = max(-1.0, min(1.0, v / top))
    end = (178, 24, 43) if t >= 0 else (33, 102, 172)
    t = abs(t)
    r, g, b = (round(255 + (c - 255) * t) for c in end)
    return f"#{r:02x}{g:02x}{b:02x}"


# ---- chapter 13: SGD and AdamW on an ill-conditioned quadratic -----------------------------------------------------


def optimizers_figure(data):
    recs = records(data)
    a, b = nums(dict(recs)["quadratic"])
    runs, cur = [], None
    for key, rest in recs:
        if key == "optimizer":
            cur = {"name": rest, "steps": []}
            runs.append(cur)
        elif key == "step":
            cur["steps"].append(nums(rest))
    steps = int(runs[0]["steps"][-1][0])
    styles = [(RED, "7,3", "square"), (GREEN, "9,3,2,3", "triangle"), (BLUE, None, "circle")]
    svg = Plot(500)
    svg.text(20, 24, f"{steps} steps of ropegrad's optimizers on f(x, y) = (x² + {b:g} y²) / 2, from (−4.5, 1.2)",
             13.5, weight="bold")
    ax = Axes(svg, 62, 44, 600, 300, (-5.0, 1.0), (-1.5, 1.5))  # equal scales: 100 px per unit
    ax.ylabel_x = 22
    ax.frame([-5, -4, -3, -2, -1, 0, 1], [-1.5, -1, -0.5, 0, 0.5, 1, 1.5], "x", "y", grid=False, size=11)
    for level in (0.03125, 0.125, 0.5, 2, 8):  # the ellipses x² + b y² = 2 level
        rx, ry = math.sqrt(2 * level / a), math.sqrt(2 * level / b)
        svg.add(f'<ellipse cx="{ax.X(0):.1f}" cy="{ax.Y(0):.1f}" rx="{ax.X(rx) - ax.X(0):.1f}" '
                f'ry="{ax.Y(0) - ax.Y(ry):.1f}" fill="none" stroke="#cccccc" stroke-width="1" '
                f'clip-path="url(#{ax.clip})"/>')
    for run, (colour, dash, kind) in zip(runs, styles):
        xs, ys = [s[1] for s in run["steps"]], [s[2] for s in run["steps"]]
        ax.polyline(xs, ys, colour, 1.6, dash)
        ax.markers(xs, ys, kind, colour, 3.2)
    svg.marker(ax.X(0), ax.Y(0), "cross", DARK, 5)
    svg.text(ax.X(0) + 8, ax.Y(0) + 18, "minimum", 11.5)
    svg.text(ax.X(-4.5) + 8, ax.Y(1.2) - 6, "start", 11.5)
    svg.legend(62, 400, [(f"{r['name']}: f = {r['steps'][-1][3]:.1e} after {steps} steps", c, d, k)
                         for r, (c, d, k) in zip(runs, styles)], row=19)
    svg.text(20, 466, "f is 20 times steeper along y. SGD's lr must stay below 2/20, so it zigzags in y and crawls in x.",
             12, italic=True, fill="#444444")
    svg.text(20, 484, "AdamW's first steps are lr · sign(g): the diagonal, whatever the curvature of each coordinate.",
             12, italic=True, fill="#444444")
    return svg.render()


# ---- chapter 14: a checkpoint's bytes ----------------------------------------------------------------------------


def checkpoint_figure(data):
    import json
    import zlib
    d = dict(records(data))
    size, n = int(d["file"]), int(d["header_length"])
    header = json.loads(d["header"])
    data_bytes = bytes(int(v, 16) for v in d["data"].split())
    meta = header.pop("__metadata__")
    entries = sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0])
    svg = Plot(160 + 26 * len(entries) + 70)
    svg.text(20, 24, f"ckpt.safetensors: a Linear(3, 2) after one AdamW step, {size:,} bytes", 13.5, weight="bold")
    # the whole file, to scale
    x0, w = 20, 660
    parts = [("N", 0, 8, "#fff1c1"), (f"JSON header: {n:,} bytes", 8, 8 + n, "#dfe7fd"),
             ("data", 8 + n, size, "#d7f0db")]
    for label, lo, hi, fill in parts:
        svg.rect(x0 + w * lo / size, 40, w * (hi - lo) / size, 30, fill=fill, stroke="#555555")
    svg.text(x0 + w * (8 + n / 2) / size, 60, f"JSON header: bytes 8 .. {7 + n:,}", 12, "middle")
    svg.text(20, 88, f"bytes 0 .. 7: N = {n:,} (uint64, little-endian)", 12, fill="#444444")
    svg.text(680, 88, f"bytes {8 + n:,} .. {size - 1:,}: data", 12, "end", fill="#444444")
    keys = ", ".join(k for k in meta if not k.startswith("crc32."))
    svg.text(20, 108, f"the header: __metadata__ ({keys}, a crc32.NAME per tensor),", 11.5, fill="#444444")
    svg.text(20, 124, "then per tensor: dtype, shape, data_offsets", 11.5, fill="#444444")
    # the data section, one row per tensor, against its byte offsets
    total = size - 8 - n
    top, row = 160, 26
    lx, bw = 300, 250
    svg.text(20, top - 12, "tensor (from the header's JSON)", 12, weight="bold")
    svg.text(lx + bw / 2, top - 12, "its bytes in the data section", 12, "middle", weight="bold")
    svg.text(680, top - 12, "CRC-32", 12, "end", weight="bold")
    for i, (name, e) in enumerate(entries):
        lo, hi = e["data_offsets"]
        y = top + i * row
        short = name.replace("optimizer.", "opt.")
        shape = "×".join(str(s) for s in e["shape"]) or "scalar"
        svg.text(20, y + 16, f"{short}", 11.5, mono=True)
        svg.text(lx - 8, y + 16, f"{e['dtype']} {shape}", 11, "end", mono=True, fill="#444444")
        fill = {"F32": "#c6dbef", "F64": "#fce1c8", "I64": "#e8dff5"}[e["dtype"]]
        svg.rect(lx, y + 3, bw, row - 6, fill="#f5f5f5", stroke="#dddddd")
        svg.rect(lx + bw * lo / total, y + 3, bw * (hi - lo) / total, row - 6, fill=fill, stroke="#555555")
        crc = meta.get(f"crc32.{name}")
        ok = crc is not None and int(crc, 16) == zlib.crc32(data_bytes[lo:hi])
        svg.text(680, y + 16, f"{crc} {'✓' if ok else '✗'}", 11, "end", mono=True)
    y = top + len(entries) * row
    for off in (0, 32, 64, 96, total):
        svg.line(lx + bw * off / total, y, lx + bw * off / total, y + 4, stroke=DARK)
        svg.text(lx + bw * off / total, y + 16, off, 11, "middle")
    svg.text(lx + bw / 2, y + 32, "byte offset in the data section", 11.5, "middle")
    svg.text(20, y + 56, "blue F32, orange F64, purple I64. ✓: the stored CRC-32 equals zlib.crc32 of those bytes.",
             12, italic=True, fill="#444444")
    return svg.render()


# ---- chapter 15: Gaussians and their W2 distance ------------------------------------------------------------------


def w2_figure(data):
    recs = records(data)
    mq, sq = nums(dict(recs)["query"])
    keys = []
    for key, rest in recs:
        if key == "key":
            parts = rest.split(" ", 5)
            keys.append([float(v) for v in parts[:5]] + [parts[5]])
    styles = [(BLUE, "7,3", "circle"), (GREEN, "2,3", "triangle"), (RED, "9,3,2,3", "square"),
              (PURPLE, "4,2", "diamond")]
    svg = Plot(534)
    svg.text(20, 24, "a query and four keys as 1-D Gaussians (d_h = 1, τ = 1), and their W2 distances", 13.5,
             weight="bold")
    ax = Axes(svg, 60, 44, 620, 180, (-2.5, 5.0), (0, 0.85))
    ax.ylabel_x = 18
    ax.frame([-2, -1, 0, 1, 2, 3, 4, 5], [0, 0.2, 0.4, 0.6, 0.8], "position on the line (the mean μ)", "density",
             size=11)
    xs = [ax.xlim[0] + k * 0.02 for k in range(376)]

    def pdf(m, s):
        return [math.exp(-0.5 * ((x - m) / s) ** 2) / (s * math.sqrt(2 * math.pi)) for x in xs]

    ax.polyline(xs, pdf(mq, sq), DARK, 2.6)
    svg.text(ax.X(mq) - 44, ax.Y(0.8) + 2, f"query N({mq:g}, {sq:g}²)", 12, "end", weight="bold")
    for i, (k, (colour, dash, kind)) in enumerate(zip(keys, styles)):
        ys = pdf(k[0], k[1])
        ax.polyline(xs, ys, colour, 2.0, dash)
        peak = 1 / (k[1] * math.sqrt(2 * math.pi))
        svg.marker(ax.X(k[0]), ax.Y(peak), kind, colour, 4.5)
        svg.text(ax.X(k[0]) + 8, ax.Y(peak) - 6 + (14 if i == 0 else 0), f"k{i + 1}", 12, weight="bold", fill=colour)
    # the terms, as stacked bars
    bx = Axes(svg, 220, 300, 300, 4 * 34, (0, 3.0), (0, 4))
    svg.text(20, 290, "key", 12, weight="bold")
    svg.text(bx.x + bx.w / 2, 290, "W2² = location + shape", 12, "middle", weight="bold")
    svg.text(680, 290, "weight P", 12, "end", weight="bold")
    for t in (0, 1, 2, 3):
        svg.line(bx.X(t), bx.y, bx.X(t), bx.y + bx.h, stroke="#e6e6e6")
        svg.text(bx.X(t), bx.y + bx.h + 16, t, 11, "middle")
    for i, (k, (colour, dash, kind)) in enumerate(zip(keys, styles)):
        m, s, loc, shp, p, name = k
        y = bx.y + i * 34
        svg.marker(28, y + 17, kind, colour, 4.5)
        svg.text(40, y + 14, f"k{i + 1} N({m:g}, {s:g}²)", 11.5, weight="bold", fill=colour)
        svg.text(40, y + 29, name, 11, fill="#444444")
        svg.rect(bx.X(0), y + 6, bx.X(loc) - bx.X(0), 22, fill=colour, stroke=colour)
        svg.rect(bx.X(loc), y + 6, bx.X(loc + shp) - bx.X(loc), 22, fill="white", stroke=colour, width=1.5,
                 dash="3,2")
        svg.text(bx.X(loc + shp) + 6, y + 22, f"{loc:.2f} + {shp:.2f} = {loc + shp:.2f}", 11.5, mono=True)
        svg.text(680, y + 22, f"{p:.3f}", 12, "end", mono=True, weight="bold")
    ly = bx.y + bx.h + 44
    svg.rect(220, ly - 11, 26, 13, fill=DARK, stroke=DARK)
    svg.text(252, ly, "location: (μ_q − μ_k)²", 12)
    svg.rect(430, ly - 11, 26, 13, fill="white", stroke=DARK, width=1.5, dash="3,2")
    svg.text(462, ly, "shape: (σ_q − σ_k)²", 12)
    svg.text(20, ly + 26, "P = softmax(−W2² / (τ + ε)), as w2_attention_probs returns it: the near, equally sure key "
                          "wins;", 12, italic=True, fill="#444444")
    svg.text(20, ly + 44, f"k2 sits on the query's mean, but its shape term {keys[1][3]:.2f} costs as much as a mean "
                          f"{math.sqrt(keys[1][3]):.1f} away.", 12, italic=True, fill="#444444")
    return svg.render()


# ---- chapter 17: the KV cache --------------------------------------------------------------------------------------


def kv_cache_figure(data):
    recs = records(data)
    calls = []
    for key, rest in recs:
        if key == "call":
            past, new, length = (int(v) for v in rest.split())
            calls.append({"past": past, "new": new, "length": length})
        elif key == "weights":
            calls[-1]["w"] = nums(rest)
    diff = dict(recs)["max_diff_to_full"]
    c = 24
    svg = Plot(380)
    svg.text(20, 24, "one attention layer fed 10 tokens in chunks of 6, 1 and 3 through a KVCache", 13.5,
             weight="bold")
    x = 40
    for n, call in enumerate(calls):
        past, new, nk = call["past"], call["new"], call["length"]
        y0 = 92
        svg.text(x, 54, f"call {n + 1}: {new} new token{'s' if new > 1 else ''}", 12.5, weight="bold")
        svg.text(x, 72, f"cache {past} → {nk} keys", 12, fill="#444444")
        for j in range(nk):
            svg.text(x + j * c + c / 2, y0 - 6, j, 11, "middle", fill="#444444")
        for i in range(new):
            svg.text(x - 4, y0 + i * c + c / 2 + 4, past + i, 11, "end", fill="#444444")
            for j in range(nk):
                v = call["w"][i * nk + j]
                cached = j < past
                if j > past + i:
                    svg.rect(x + j * c, y0 + i * c, c, c, fill="#eeeeee", stroke="#bbbbbb")
                    continue
                shade = int(255 - 150 * min(1.0, v * 2))
                fill = f"#{shade:02x}{shade + (255 - shade) // 3:02x}ff"
                svg.rect(x + j * c, y0 + i * c, c, c, fill=fill, stroke="#777777")
                svg.text(x + j * c + c / 2, y0 + i * c + c / 2 + 4, "1" if v > 0.995 else f"{v:.2f}".lstrip("0"), 11,
                         "middle", mono=True)
        # which keys came from the cache
        if past:
            svg.rect(x, y0 - 1, past * c, new * c + 2, stroke=ORANGE, width=2.2, dash="5,3")
            svg.text(x + past * c / 2, y0 + new * c + 18, "from the cache", 11.5, "middle", fill=ORANGE)
        svg.rect(x + past * c, y0 - 1, new * c, new * c + 2, stroke=BLUE, width=2.2)
        svg.text(x + past * c + new * c / 2, y0 + new * c + 18 + (16 if past else 0), "new keys", 11.5,
                 "middle" if past else "start", fill=BLUE)
        x += nk * c + 34
    y = 92 + 6 * c + 40
    svg.text(20, y, "Rows: the new queries at their true positions past .. past + T − 1; columns: every key so far.", 12)
    svg.text(20, y + 18, "A query sees the whole cache and the new keys up to itself (causal_offset = past); grey: masked.",
             12)
    svg.text(20, y + 36, f"The weights are those of one pass over all 10 tokens (largest difference {diff}); the",
             12)
    svg.text(20, y + 54, "cached calls compute 6·6 + 1·7 + 3·10 = 73 scores per head, against 36 + 49 + 100 = 185",
             12)
    svg.text(20, y + 72, "if every call recomputed the whole sequence so far.", 12)
    return svg.render()


# ---- chapter 21: the ring all-reduce ----------------------------------------------------------------------------


def ring_figure(data):
    recs = records(data)
    states = [(rest.rsplit(" ", 9)[0], [int(v) for v in rest.split()[-9:]]) for key, rest in recs if key == "state"]
    sends = [[int(v) for v in rest.split()[-3:]] for key, rest in recs if key == "round"]
    n = 3
    step = 76
    top = 100
    svg = Plot(top + step * len(states) + 20)
    svg.text(20, 24, "ring all-reduce of 3 ranks, each vector cut into chunks [0], [1], [2]", 13.5, weight="bold")
    svg.text(20, 44, "a cell lists the ranks summed into that chunk; an arrow sends it to the next rank (rank 2 sends "
                     "to 0)", 12, fill="#444444")
    svg.line(20, 60, 50, 60, stroke=RED, width=1.6, arrow=True)
    svg.text(56, 64, "reduce-scatter: the receiver adds it to its own", 12)
    svg.line(370, 60, 400, 60, stroke=GREEN, width=1.6, arrow=True)
    svg.text(406, 64, "all-gather: the receiver keeps it", 12)
    cw, ch = 52, 30
    col = [150 + r * 186 for r in range(n)]
    for r in range(n):
        svg.text(col[r] + 1.5 * cw, top - 18, f"rank {r}", 12.5, "middle", weight="bold")
        for c in range(n):
            svg.text(col[r] + c * cw + cw / 2, top - 4, f"[{c}]", 11, "middle", fill="#444444")
    shades = {1: "#ffffff", 2: "#c6dbef", 3: "#6baed6"}
    for s, (label, held) in enumerate(states):
        y = top + s * step
        svg.text(20, y + 20, label, 12, weight="bold")
        for r in range(n):
            for c in range(n):
                members = [str(k) for k in range(n) if held[r * n + c] >> k & 1]
                complete = len(members) == n
                svg.rect(col[r] + c * cw, y, cw, ch, fill=shades[len(members)], stroke=DARK if complete else "#888888",
                         width=2 if complete else 1)
                svg.text(col[r] + c * cw + cw / 2, y + 19, "+".join(members), 12, "middle", mono=True,
                         weight="bold" if complete else "normal", fill="white" if complete else DARK)
        if s + 1 < len(states):
            colour = RED if s < n - 1 else GREEN
            for r in range(n):
                c, to = sends[s][r], (r + 1) % n
                x1, y1 = col[r] + c * cw + cw / 2, y + ch
                x2, y2 = col[to] + c * cw + cw / 2, y + step
                if to == 0:  # the wrap-around, dashed: back to rank 0
                    svg.line(x1, y1, x1, y1 + 12, stroke=colour, width=1.4, dash="5,3")
                    svg.line(x1, y1 + 12, x2, y2 - 12, stroke=colour, width=1.4, dash="5,3")
                    svg.line(x2, y2 - 12, x2, y2 - 1, stroke=colour, width=1.4, dash="5,3", arrow=True)
                else:
                    svg.line(x1, y1, x2, y2 - 1, stroke=colour, width=1.4, arrow=True)
    y = top + len(states) * step - 24
    ok = dict(recs)["complete"] == "yes"
    svg.text(20, y, f"Every rank ends with every chunk summed over all ranks{' (checked)' if ok else ''}: 2(N − 1) = 4 "
                    f"rounds, each sending", 12, italic=True, fill="#444444")
    svg.text(20, y + 18, f"one chunk of S/N bytes per rank, 2(N − 1)/N · S in all (ring_bytes(900, 3) = "
                         f"{dict(recs)['bytes_per_rank_of_900']}).", 12, italic=True, fill="#444444")
    return svg.render()


# ---- chapter 21: the buckets against the backward ----------------------------------------------------------------


def buckets_figure(data):
    recs = records(data)
    panels, cur = [], None
    for key, rest in recs:
        if key == "profile":
            cur = {"name": rest, "buckets": []}
            panels.append(cur)
        elif key == "bucket":
            cur["buckets"].append(nums(rest))
        else:
            cur[key] = float(rest)
    ph = 138
    svg = Plot(40 + ph * len(panels) + 40)
    svg.text(20, 24, "the last backward against each gradient bucket's all-reduce, on one channel", 13.5,
             weight="bold")
    for p, panel in enumerate(panels):
        y0 = 44 + p * ph
        bw = panel["backward"]
        end = max(bw, max(b[3] for b in panel["buckets"]))
        # a tick every 1, 2 or 5 x 10^k ms, 4 to 10 of them
        scale = min((m * 10 ** k for k in range(-2, 4) for m in (1, 2, 5) if end * 1000 / (m * 10 ** k) <= 8),
                    default=1000)
        span = math.ceil(end * 1000 / scale) * scale
        ax = Axes(svg, 110, y0 + 42, 550, 52, (0, span / 1000), (0, 2))
        svg.text(20, y0 + 16, f"{panel['name']}, N = {panel['ranks']:g} ranks", 12, weight="bold")
        ticks = [k * scale / 1000 for k in range(round(span / scale) + 1)]
        ax.frame(ticks, [], "", "", xfmt=lambda v: f"{v * 1000:g} ms", grid=True, size=11)
        svg.text(104, ax.Y(1.5) + 4, "backward", 11.5, "end")
        svg.text(104, ax.Y(0.5) + 4, "all-reduce", 11.5, "end")
        svg.rect(ax.X(0), ax.Y(1.9), ax.X(bw) - ax.X(0), ax.Y(1.1) - ax.Y(1.9), fill="#dddddd", stroke="#777777")
        for i, (elements, ready, start, stop) in enumerate(panel["buckets"]):
            svg.line(ax.X(ready), ax.Y(1.1), ax.X(ready), ax.Y(0.9), stroke=DARK, width=1)
            fill = "#9ecae1" if i % 2 == 0 else "#3182bd"
            svg.rect(ax.X(start), ax.Y(0.9), max(ax.X(stop) - ax.X(start), 0.6), ax.Y(0.1) - ax.Y(0.9), fill=fill,
                     stroke="none")
        if panel["exposed"] > 0:
            svg.rect(ax.X(bw), ax.Y(0.95), ax.X(bw + panel["exposed"]) - ax.X(bw), ax.Y(0.05) - ax.Y(0.95),
                     stroke=RED, width=2, dash="4,2")
        svg.line(ax.X(bw), ax.y, ax.X(bw), ax.y + ax.h, stroke=RED, width=1.2, dash="2,2")
        svg.text(20, y0 + 33, f"communication after the backward: {panel['exposed'] * 1000:.2f} ms; hidden behind it: "
                              f"{panel['overlap'] * 100:.1f}%", 12, fill=RED)
    y = 44 + len(panels) * ph
    svg.text(20, y, "Grey: the last micro-batch's backward; ticks: a bucket's last gradient is ready; blue: its ring "
                    "all-reduce.", 12, italic=True, fill="#444444")
    svg.text(20, y + 18, "Red box: communication left after the backward, which the step waits for.", 12, italic=True,
             fill="#444444")
    return svg.render()


# ---- chapter 21: ZeRO-1's shards ----------------------------------------------------------------------------------


def zero_figure(data):
    recs = records(data)
    params = [(rest.split()[0], int(rest.split()[1])) for key, rest in recs if key == "param"]
    total = int(dict(recs)["total"])
    ranks = [[int(v) for v in rest.split()] for key, rest in recs if key == "rank"]
    svg = Plot(460)
    svg.text(20, 24, f"ZeRO-1 on 3 ranks: the copy-task model's {total:,} parameters, flattened", 13.5,
             weight="bold")
    x0, w = 20, 660

    def X(e):
        return x0 + w * e / total

    def group(name):
        if "embeddings" in name:
            return "#fce1c8"
        if "lm_head" in name:
            return "#e8dff5"
        if ".attn." in name:
            return "#c6dbef"
        if ".ffn." in name:
            return "#d7f0db"
        return "#f6d6f0"

    off = 0
    for name, n in params:
        svg.rect(X(off), 44, X(off + n) - X(off), 30, fill=group(name), stroke="#555555", width=0.5)
        off += n
    for name, fill in (("embedding", "#fce1c8"), ("attention", "#c6dbef"), ("feed-forward", "#d7f0db"),
                       ("lm_head", "#e8dff5")):
        pass
    labels = [("token_embeddings", "#fce1c8"), ("attn", "#c6dbef"), ("ffn", "#d7f0db"), ("lm_head", "#e8dff5")]
    lx = 20
    for label, fill in labels:
        svg.rect(lx, 82, 14, 12, fill=fill, stroke="#555555")
        svg.text(lx + 20, 93, label, 11.5, mono=True)
        lx += 40 + text_width(label, 11.5, True)
    svg.text(lx, 93, "(norms: too thin to see)", 11.5, fill="#444444")
    colours = [BLUE, RED, GREEN]
    for r, (rank, begin, end, state) in enumerate(ranks):
        y = 112
        svg.line(X(begin) + 1, y, X(end) - 1, y, stroke=colours[r], width=3)
        svg.line(X(begin) + 1, y - 6, X(begin) + 1, y + 6, stroke=colours[r], width=2)
        svg.line(X(end) - 1, y - 6, X(end) - 1, y + 6, stroke=colours[r], width=2)
        svg.text((X(begin) + X(end)) / 2, y + 20, f"rank {rank}: [{begin:,}, {end:,})", 11.5, "middle",
                 fill=colours[r])
    # bytes per rank
    P = total
    ax = Axes(svg, 150, 172, 520, 170, (0, 28), (0, 4))
    svg.text(20, 164, "bytes each rank holds (MB)", 12.5, weight="bold")
    ax.frame(list(range(0, 29, 4)), [], "", "", xfmt=lambda v: f"{v:g}", size=11)
    kinds = [("parameters 4P", "#cccccc"), ("gradients 4P", "#e6e6e6"), ("float64 sums 8P", "#fff1c1"),
             ("AdamW m, v: 8P or a third", "#6baed6")]
    rows = [("plain data parallel", [4 * P, 4 * P, 8 * P, 8 * P])]
    rows += [(f"--zero 1, rank {rank}", [4 * P, 4 * P, 8 * P, state]) for rank, begin, end, state in ranks]
    for i, (label, parts) in enumerate(rows):
        y = ax.y + 8 + i * 40
        svg.text(144, y + 19, label, 11.5, "end")
        x = 0
        for b, (name, fill) in zip(parts, kinds):
            svg.rect(ax.X(x / 1e6), y, ax.X((x + b) / 1e6) - ax.X(x / 1e6), 26, fill=fill, stroke="#555555")
            x += b
        svg.text(ax.X(x / 1e6) + 6, y + 17, f"{x / 1e6:.2f} MB" + (f" (m, v: {parts[-1] / 1e6:.2f})" if i else ""),
                 11.5)
    lx = 150
    for name, fill in kinds:
        svg.rect(lx, 372, 14, 12, fill=fill, stroke="#555555")
        svg.text(lx + 19, 383, name, 11.5)
        lx += 34 + text_width(name, 11.5)
    svg.text(20, 412, "Each rank keeps AdamW's m and v for its third of the elements only (a range may cut a tensor),",
             12, italic=True, fill="#444444")
    svg.text(20, 430, "updates that third, and an all-gather gives every rank every weight. ropegrad's exact float64",
             12, italic=True, fill="#444444")
    svg.text(20, 448, "sums (8P, not sharded) stay: ZeRO-1 saves 2/3 of the 8P of optimizer state here.", 12,
             italic=True, fill="#444444")
    return svg.render()


FIGURES = {"views": views, "graph": graph, "broadcast-matmul": broadcast_matmul, "rope": rope, "masks": masks,
           "tiles": tiles, "gram": gram, "bpe": bpe, "fd-error": fd_error, "init": init, "embedding": embedding_figure,
           "rmsnorm": rmsnorm_figure, "silu": silu_plot, "rope-scores": rope_scores, "schedule": schedule,
           "optimizers": optimizers_figure, "checkpoint": checkpoint_figure, "w2": w2_figure,
           "flop-shares": flop_shares, "kv-cache": kv_cache_figure, "ring": ring_figure, "buckets": buckets_figure,
           "zero": zero_figure}


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in FIGURES:
        sys.exit(f"usage: draw_figures.py {{{'|'.join(FIGURES)}}} DATA OUT.svg")
    with open(sys.argv[2], encoding="utf-8") as f:
        data = f.read()
    with open(sys.argv[3], "w", encoding="utf-8") as f:
        f.write(FIGURES[sys.argv[1]](data))


if __name__ == "__main__":
    main()
