#!/usr/bin/python3
"""Draws the book's explanatory figures as SVG, from what the library prints.
Standard library only; the same input gives the same bytes.

  draw_figures.py FIGURE DATA OUT.svg

FIGURE is one of the modes of docs/figures/figure_data.cpp (views,
broadcast-matmul, rope, masks, tiles, gram, bpe), whose output is DATA, or
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


FIGURES = {"views": views, "graph": graph, "broadcast-matmul": broadcast_matmul, "rope": rope, "masks": masks,
           "tiles": tiles, "gram": gram, "bpe": bpe}


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in FIGURES:
        sys.exit(f"usage: draw_figures.py {{{'|'.join(FIGURES)}}} DATA OUT.svg")
    with open(sys.argv[2], encoding="utf-8") as f:
        data = f.read()
    with open(sys.argv[3], "w", encoding="utf-8") as f:
        f.write(FIGURES[sys.argv[1]](data))


if __name__ == "__main__":
    main()
