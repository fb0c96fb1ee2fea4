#!/usr/bin/env python3
"""Serves the built book over HTTP and checks every page in headless Chromium.

    browser_check.py SITE_DIR SCREENS_DIR [PAGE.html...]     (no PAGE: every page of the site)

A small check page in the site loads each page in turn in an iframe (same
origin, served by a local HTTP server), waits until MathJax has typeset every
formula, and writes what it found into the DOM, which `chromium --dump-dom`
prints; a screenshot of the page goes to SCREENS_DIR. A page fails when:

* MathJax did not load, a formula was not typeset or not shown, or MathJax
  reported an error;
* a `$` is typeset inside maths (two `$$` blocks run together, a `$` inside
  `$...$`), or a backslash is (`\\_` inside `\\text{}`: TeX shown, not read);
* TeX is left in the text (`$...$`, `\\(`, a `\\command`) or in the table of
  contents (a heading holding maths);
* fewer formulas were typeset than the page's Markdown source holds (counted
  here the way pymdownx.arithmatex reads them, code left out);
* an image did not load;
* a link to a page of the site, or an anchor in it, does not resolve (read
  from the built HTML: every href of every page);
* something is not whole on screen. Every page is laid out at 1280 px (a
  laptop) and at 400 px (a phone) wide, after MathJax has typeset it:
  - a table wider than its column fails at 1280 px, naming the columns it
    hides (the text discusses them: split or reflow the table); at 400 px it
    may be wider only when its box scrolls sideways with a visible
    affordance: `overflow-x` auto or scroll and the scroll shadows of
    docs/assets/extra.css (a shadow at the edge that has more), which is
    what "visible" means here, since a phone shows no scroll bar;
  - a code block wider than its column fails at either width unless it
    scrolls with that affordance (a cut line, `overflow: hidden`, fails
    always); at 1280 px a block whose lines are at most 100 columns must fit
    whole, and a hand-written block (not a program's output or a source or
    solution block, which must equal their text) may have no line longer
    than 100 columns in the Markdown source;
  - text of an SVG figure runs outside the figure (each text element's box,
    laid out with the figure's own fonts, against the SVG's box).
  Each page prints what it found at each width; the last line counts the
  pages, the widths and the problems.

Then the site's search (mkdocs-material's, a web worker over
search/search_index.json) is asked for "RMSNorm" in the browser; no result
fails. The search index of Debian's mkdocs-material needs the `options` that
docs/hooks/search_index.py adds, or the worker stops at "Initializing search".

Chromium runs on virtual time (`--virtual-time-budget`), which races ahead
while the page only waits: the pages' checks wait with timers, in virtual
time. The search worker runs in real time, so the search check waits by
fetching `/_wait` from this server, which answers after a quarter of a
second: virtual time does not advance while a request is open.
"""
import argparse
import functools
import html.parser
import http.server
import json
import pathlib
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.parse

ROOT = pathlib.Path(__file__).resolve().parents[2]

CHECK_PAGE = r"""<!doctype html><meta charset="utf-8">
<iframe id="f" width="1280" height="900"></iframe>
<pre id="result">pending</pre>
<script>
const PAGES = %s;
const f = document.getElementById("f");
// MathJax runs on Chromium's virtual time: waiting is a timer (instant in real time)
const wait = () => new Promise(resolve => setTimeout(resolve, 250));
const loaded = page => new Promise(resolve => { f.onload = resolve; f.src = page; });
// Display formulas not drawn inside their box (clipped away by the theme).
const hiddenDisplays = art => [...art.querySelectorAll("div.arithmatex")].filter(box => {
  const svg = box.querySelector(".MathJax_SVG svg");
  if (!svg) return true;
  const r = svg.getBoundingClientRect(), c = box.getBoundingClientRect();
  return r.width <= 0 || r.right <= c.left || r.left >= c.right;
}).length;
// TeX a reader should never see as text.
const TEX = /\$[^$]*\$|\$\$|\\\(|\\\[|\\[A-Za-z]{2,}|[_^]\{/g;
const WIDTHS = [1280, 400], WHOLE_AT = 1280, MAX_COLUMNS = 100;
// A box that is wider than it shows scrolls sideways and shows it (extra.css's scroll shadows).
const scrollsVisibly = (w, el) => {
  const cs = w.getComputedStyle(el);
  return /auto|scroll/.test(cs.overflowX) && /radial-gradient/.test(cs.backgroundImage);
};
const shortText = t => t.replace(/\s+/g, " ").trim().slice(0, 50);
// Tables and code blocks not whole on screen at this width.
function layout(w, art, width) {
  const found = [];
  art.querySelectorAll("table").forEach((t, i) => {
    const box = t.closest(".md-typeset__scrollwrap") || t;
    const over = box.scrollWidth - box.clientWidth;
    if (over <= 1) return;
    const right = box.getBoundingClientRect().right;
    const hidden = [...t.querySelectorAll("tr:first-child > th, tr:first-child > td")]
        .filter(c => c.getBoundingClientRect().right > right + 1).map(c => shortText(c.textContent));
    const what = `table ${i + 1} (columns ${shortText(t.querySelector("tr").textContent)}) is ${over} px wider than ` +
                 `its column, hiding ${JSON.stringify(hidden)}`;
    if (width === WHOLE_AT) found.push(what);
    else if (!scrollsVisibly(w, box)) found.push(what + " with no visible scroll");
  });
  art.querySelectorAll("pre").forEach((pre, i) => {
    const box = pre.querySelector("code") || pre;
    const over = box.scrollWidth - box.clientWidth;
    if (over <= 1) return;
    const lines = box.textContent.split("\n");
    const longest = lines.reduce((a, b) => b.length > a.length ? b : a, "");
    const what = `code block ${i + 1} is ${over} px wider than its column (longest line, ${longest.length} ` +
                 `columns: ${JSON.stringify(longest.slice(0, 40))}...)`;
    if (!scrollsVisibly(w, box)) found.push(what + ", cut: no visible scroll");
    else if (width === WHOLE_AT && longest.length <= MAX_COLUMNS) found.push(what + `: ${MAX_COLUMNS} columns must fit`);
  });
  return found;
}
// SVG figures whose text runs outside the figure: each one laid out in this
// (unstyled) page with its own fonts, each text element's box against the SVG's.
async function svgTextOutside(art) {
  const found = [];
  for (const img of art.querySelectorAll('img[src$=".svg"]')) {
    const holder = document.createElement("div");
    holder.innerHTML = await (await fetch(img.src)).text();
    document.body.appendChild(holder);
    const svg = holder.querySelector("svg");
    if (svg) {
      const box = svg.getBoundingClientRect();
      for (const t of svg.querySelectorAll("text")) {
        const r = t.getBoundingClientRect();
        const out = Math.max(box.left - r.left, r.right - box.right, box.top - r.top, r.bottom - box.bottom);
        if (out > 0.5) found.push(`${img.getAttribute("src")}: text ${JSON.stringify(shortText(t.textContent))} ` +
                                  `runs ${out.toFixed(1)} px outside the figure`);
      }
    }
    holder.remove();
  }
  return found;
}
async function check(page) {
  f.width = WIDTHS[0];
  await loaded(page);
  const w = f.contentWindow, d = f.contentDocument;
  const art = d.querySelector("article") || d.body;
  const scripts = () => art.querySelectorAll('script[type^="math/tex"]').length;
  const typeset = () => art.querySelectorAll(".MathJax_SVG").length;
  // Wait until every formula is typeset and shown (or 15 s have passed).
  for (let tries = 0; tries < 60; tries++) {
    if (w.MathJax && w.MathJax.Hub && typeset() >= scripts() && hiddenDisplays(art) === 0) break;
    await wait();
  }
  const prose = art.cloneNode(true);
  prose.querySelectorAll("pre, code, script, .MathJax_SVG, .MathJax_SVG_Display, .MathJax_Preview, svg")
       .forEach(e => e.remove());
  const toc = [...d.querySelectorAll(".md-nav__link, title, .md-header__topic")].map(e => e.textContent);
  const jax = w.MathJax && w.MathJax.Hub ? w.MathJax.Hub.getAllJax(art) : [];
  const layouts = {};
  for (const width of WIDTHS) {
    if (f.width != width) { f.width = width; await wait(); await wait(); }
    layouts[width] = layout(w, art, width);
  }
  const svgs = await svgTextOutside(art);
  return {
    layouts: layouts,
    svg_text: svgs,
    page: page,
    hidden_displays: hiddenDisplays(art),
    mathjax: !!(w.MathJax && w.MathJax.Hub),
    math_scripts: scripts(),
    rendered: typeset(),
    errors: (art.textContent.match(/Math Processing Error/g) || []).length + jax.filter(j => j.texError).length,
    // a "$" typeset as maths: in the TeX handed to MathJax, or drawn as its glyph
    dollar_tex: [...art.querySelectorAll('script[type^="math/tex"]')]
        .map(s => s.textContent).filter(t => /(^|[^\\])\$/.test(t)).slice(0, 3),
    dollar_glyphs: art.querySelectorAll('.MathJax_SVG use[*|href$="-24"]').length,
    // a backslash drawn as a glyph: TeX that MathJax showed instead of reading (\_ inside \text{})
    backslash_glyphs: [...art.querySelectorAll('script[type^="math/tex"]')].filter(s => {
      const frame = s.previousElementSibling;
      return frame && frame.querySelector('use[*|href$="-5C"]');
    }).map(s => s.textContent).slice(0, 3),
    raw: (prose.textContent.match(TEX) || []).slice(0, 5),
    toc: toc.filter(t => t.match(TEX)).map(t => t.trim()).slice(0, 5),
    imgs: [...art.querySelectorAll("img")].map(
        i => ({src: i.getAttribute("src"), width: i.naturalWidth, complete: i.complete})),
  };
}
(async () => {
  const results = [];
  for (const page of PAGES) {
    results.push(await check(page));
  }
  document.getElementById("result").textContent = JSON.stringify(results);
})();
</script>
"""

SEARCH_PAGE = """<!doctype html><meta charset="utf-8">
<iframe id="f" src="index.html" width="1200" height="900"></iframe>
<pre id="result">pending</pre>
<script>
const f = document.getElementById("f");
const wait = () => fetch("/_wait?" + Math.random());
f.onload = async () => {
  const d = f.contentDocument;
  const input = d.querySelector("input.md-search__input");
  const meta = () => (d.querySelector(".md-search-result__meta") || {}).textContent || "";
  const items = () => d.querySelectorAll(".md-search-result__item").length;
  let result = {box: !!input};
  if (input) {
    // the worker builds its index in real time: wait until it is ready
    for (let i = 0; i < 60 && /Initializing/.test(meta()); i++) await wait();
    input.focus();
    input.value = "RMSNorm";
    input.dispatchEvent(new Event("input", {bubbles: true}));
    input.dispatchEvent(new KeyboardEvent("keyup", {bubbles: true, key: "m"}));
    for (let i = 0; i < 40 && items() === 0; i++) await wait();
    result = {box: true, meta: meta().trim(), items: items(),
              first: [...d.querySelectorAll(".md-search-result__item a")].slice(0, 3)
                     .map(a => a.getAttribute("href"))};
  }
  document.getElementById("result").textContent = JSON.stringify(result);
};
</script>
"""


# pymdownx.arithmatex's syntax (its defaults, as mkdocs.yml uses it): $$...$$
# blocks, $...$ inline with "smart" dollars, \(...\), \[...\], \begin{env}.
DOLLAR_BLOCK = re.compile(r"\$\$((?:\\.|[^\\])+?)\$\$", re.S)
TEX_BLOCK = re.compile(r"\\begin\{([a-z]+\*?)\}(?:\\.|[^\\])+?\\end\{\1\}", re.S)
BRACKET_BLOCK = re.compile(r"\\\[(?:\\[^\]]|[^\\])+?\\\]", re.S)
DOLLAR_INLINE = re.compile(r"(?<!\\)\$(?!\s)((?:\\.|[^\\$])+?)(?<!\s)\$")
ROUND_INLINE = re.compile(r"(?<!\\)\\\((?:\\[^)]|[^\\])+?\\\)")
FENCE = re.compile(r"^\s*(```+|~~~+)")


def source_formulas(md):
    """How many formulas a Markdown page holds: what it meant, not what
    arithmatex made of it (two $$ blocks on adjacent lines count as two)."""
    lines, fence = [], None
    for line in md.split("\n"):
        m = FENCE.match(line)
        if fence:
            if m and m.group(1).startswith(fence):
                fence = None
            lines.append("")
            continue
        if m:
            fence = m.group(1)
            lines.append("")
            continue
        lines.append(line)
    text = "\n".join(lines)
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    text = re.sub(r"(`+)(?:(?!\1).)+?\1", "``", text)  # inline code spans
    count = 0
    for pattern in (DOLLAR_BLOCK, TEX_BLOCK, BRACKET_BLOCK):
        count += len(pattern.findall(text))
        text = pattern.sub(" ", text)
    for pattern in (DOLLAR_INLINE, ROUND_INLINE):
        count += len(pattern.findall(text))
    return count


MAX_COLUMNS = 100
GENERATED = re.compile(r"^<!-- (output|regen|source|mutation-output): ")
LAYOUT_PROBLEMS = [0]  # what the layout checks found, over every page and width


def hand_written_long_lines(src):
    """Lines longer than MAX_COLUMNS in the fenced blocks of a Markdown page
    written by hand: not a block that equals a program's output or a file
    (after an output, regen or source mark), nor a solution block's code."""
    found, fence, generated, solution = [], None, False, False
    lines = src.read_text().split("\n")
    for n, line in enumerate(lines, 1):
        if line.startswith("<!-- solution: "):
            solution = True
        elif line.strip() == "<!-- end solution -->":
            solution = False
        m = FENCE.match(line)
        if fence:
            if m and m.group(1).startswith(fence):
                fence = None
            elif len(line) > MAX_COLUMNS and not generated and not solution:
                found.append(f"{src.name}:{n}: a code line of {len(line)} columns (wrap it at {MAX_COLUMNS}): "
                             f"{line.strip()[:40]}...")
            continue
        if m:
            fence = m.group(1)
            previous = next((l for l in reversed(lines[:n - 1]) if l.strip()), "")
            generated = bool(GENERATED.match(previous))
    return found


class Anchors(html.parser.HTMLParser):
    """The ids and the hrefs of one HTML page."""

    def __init__(self):
        super().__init__()
        self.ids, self.hrefs = set(), []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if a.get("name") and tag == "a":
            self.ids.add(a["name"])
        if tag == "a" and a.get("href"):
            self.hrefs.append(a["href"])
        if tag == "img" and a.get("src"):
            self.hrefs.append(a["src"])


def parse(path, cache={}):
    if path not in cache:
        p = Anchors()
        p.feed(path.read_text(errors="replace"))
        cache[path] = p
    return cache[path]


def link_problems(site, pages):
    """Every relative link of every page names a file of the site, and its
    anchor (if any) an id in that page."""
    problems = []
    for page in pages:
        for href in parse(site / page).hrefs:
            url = urllib.parse.urlsplit(href)
            if url.scheme or url.netloc or href.startswith("mailto:"):
                continue
            path = urllib.parse.unquote(url.path)
            if path.startswith("/"):  # from the site's root (404.html's links)
                target = site / path.lstrip("/")
            else:
                target = (site / page).parent / path if path else site / page
            target = target.resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                problems.append(f"{page}: link `{href}` names a missing file")
                continue
            if url.fragment and target.suffix == ".html":
                if urllib.parse.unquote(url.fragment) not in parse(target).ids:
                    problems.append(f"{page}: link `{href}`: no anchor `{url.fragment}` in {target.name}")
    return sorted(set(problems))


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return name
    sys.exit("browser_check: no chromium found (Debian package: chromium)")


def browse(url, *args):
    cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           "--hide-scrollbars", "--virtual-time-budget=3600000", *args, url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900)


def result_of(dom):
    m = re.search(r'<pre id="result">(.*?)</pre>', dom, re.S)
    if not m or m.group(1) == "pending":
        return None
    return json.loads(m.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
                      .replace("&amp;", "&"))


def source_of(page, docs):
    name = "README.md" if page == "index.html" else pathlib.Path(page).stem + ".md"
    return docs / name


def check_pages(base, site, pages, docs, screens, problems):
    check = site / "_check-pages.html"
    check.write_text(CHECK_PAGE % json.dumps(pages))
    try:
        results = result_of(browse(f"{base}/{check.name}", "--dump-dom").stdout)
    finally:
        check.unlink()
    if results is None:
        problems.append("the check page did not finish (no result in the DOM)")
        return
    for r in results:
        page = r["page"]
        src = source_of(page, docs)
        want = source_formulas(src.read_text()) if src.exists() else 0
        print(f"{page}: {want} formulas in the source, {r['math_scripts']} on the page, {r['rendered']} typeset, "
              f"{len(r['imgs'])} images, widths {[i['width'] for i in r['imgs']]}")
        if not r["mathjax"]:
            problems.append(f"{page}: MathJax did not load")
        if r["rendered"] < r["math_scripts"]:
            problems.append(f"{page}: {r['rendered']} of {r['math_scripts']} formulas typeset")
        if r["rendered"] < want:
            problems.append(f"{page}: {r['rendered']} formulas typeset, the source {src.name} holds {want} "
                            f"(two formulas run together, or maths not recognised)")
        if r["hidden_displays"]:
            problems.append(f"{page}: {r['hidden_displays']} display formulas not visible")
        if r["errors"]:
            problems.append(f"{page}: {r['errors']} MathJax errors")
        if r["dollar_tex"] or r["dollar_glyphs"]:
            problems.append(f"{page}: a `$` typeset inside maths ({r['dollar_glyphs']} glyphs): {r['dollar_tex']}")
        if r["backslash_glyphs"]:
            problems.append(f"{page}: a backslash typeset inside maths (TeX shown, not read): {r['backslash_glyphs']}")
        if r["raw"]:
            problems.append(f"{page}: raw TeX left in the text: {r['raw']}")
        if r["toc"]:
            problems.append(f"{page}: TeX in the table of contents or the title: {r['toc']}")
        for img in r["imgs"]:
            if not img["complete"] or img["width"] <= 0:
                problems.append(f"{page}: figure {img['src']} did not load")
        long_lines = hand_written_long_lines(src) if src.exists() else []
        for width, found in r["layouts"].items():
            print(f"{page} at {width} px: {len(found)} not whole on screen" + "".join(f"\n    {x}" for x in found))
            problems.extend(f"{page} at {width} px: {x}" for x in found)
        for what in r["svg_text"] + long_lines:
            print(f"    {what}")
        problems.extend(f"{page}: {x}" for x in r["svg_text"] + long_lines)
        LAYOUT_PROBLEMS[0] += sum(len(x) for x in r["layouts"].values()) + len(r["svg_text"]) + len(long_lines)
    for page in pages if screens else []:
        shot = screens / (pathlib.Path(page).stem + ".png")
        browse(f"{base}/{page}", f"--screenshot={shot}", "--window-size=1280,1400")
        if not shot.exists() or shot.stat().st_size == 0:
            problems.append(f"{page}: no screenshot")


def check_search(base, site, problems):
    check = site / "_check-search.html"
    check.write_text(SEARCH_PAGE)
    try:
        r = result_of(browse(f"{base}/{check.name}", "--dump-dom").stdout)
    finally:
        check.unlink()
    print(f"search for RMSNorm: {r}")
    if r is None:
        problems.append("search: the check page did not finish")
    elif not r.get("box"):
        problems.append("search: index.html has no search box")
    elif not r.get("items"):
        problems.append(f"search: \"RMSNorm\" found nothing ({r.get('meta')!r})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("site")
    ap.add_argument("screens")
    ap.add_argument("pages", nargs="*", help="pages to check (default: every page of the site)")
    ap.add_argument("--docs", default=str(ROOT / "docs"), help="the Markdown sources (formula counts)")
    ap.add_argument("--no-screens", action="store_true", help="no screenshots")
    args = ap.parse_intermixed_args()
    site, docs = pathlib.Path(args.site).resolve(), pathlib.Path(args.docs)
    screens = None if args.no_screens else pathlib.Path(args.screens)
    if screens:
        screens.mkdir(parents=True, exist_ok=True)
    every = sorted(p.name for p in site.glob("*.html") if p.name != "404.html" and not p.name.startswith("_"))
    pages = args.pages or every

    class Server(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            if self.path.startswith("/_wait"):  # see the docstring: real time passes, virtual time does not
                time.sleep(0.25)
                self.send_response(204)
                self.end_headers()
                return
            super().do_GET()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Server, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    problems = link_problems(site, every + ["404.html"])
    start = time.time()
    try:
        check_pages(base, site, pages, docs, screens, problems)
        check_search(base, site, problems)
    finally:
        server.shutdown()
    for p in problems:
        print(p)
    print(f"browser_check: {len(pages)} pages x 2 widths (1280 and 400 px): {LAYOUT_PROBLEMS[0]} not whole on screen")
    print(f"browser_check: {len(pages)} pages and the search in {time.time() - start:.0f} s, "
          f"{len(problems)} problem(s){f'; screenshots in {screens}' if screens else ''}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
