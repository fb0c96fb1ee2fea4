#!/usr/bin/env python3
"""Opens built pages of the book in headless Chromium and checks that the
maths was typeset by the local MathJax and that every figure loaded.

    browser_check.py SITE_DIR SCREENS_DIR PAGE.html...

For each page: a small check page in the site loads it in an iframe (same
origin, served by a local HTTP server), waits for MathJax, and writes what it
found into the DOM, which `chromium --dump-dom` prints; a screenshot of the
page goes to SCREENS_DIR. Fails naming the page and what is wrong.
"""
import functools
import http.server
import json
import pathlib
import re
import shutil
import subprocess
import sys
import threading

CHECK_PAGE = """<!doctype html><meta charset="utf-8">
<iframe id="f" src="{page}" width="1200" height="900"></iframe>
<pre id="result">pending</pre>
<script>
const f = document.getElementById("f");
// Display formulas not drawn inside their box (clipped away by the theme).
const hiddenDisplays = art => [...art.querySelectorAll("div.arithmatex")].filter(box => {{
  const svg = box.querySelector(".MathJax_SVG svg");
  if (!svg) return true;
  const r = svg.getBoundingClientRect(), c = box.getBoundingClientRect();
  return r.width <= 0 || r.right <= c.left || r.left >= c.right;
}}).length;
f.onload = () => {{
  const w = f.contentWindow, d = f.contentDocument;
  const done = () => {{
    const art = d.querySelector("article") || d.body;
    const prose = art.cloneNode(true);
    prose.querySelectorAll("pre, code, script, .MathJax_SVG, .MathJax_SVG_Display, svg")
         .forEach(e => e.remove());
    const text = prose.textContent;
    const imgs = [...art.querySelectorAll("img")].map(
        i => ({{src: i.getAttribute("src"), width: i.naturalWidth, complete: i.complete}}));
    const hidden = hiddenDisplays(art);
    document.getElementById("result").textContent = JSON.stringify({{
      hidden_displays: hidden,
      mathjax: !!(w.MathJax && w.MathJax.Hub),
      math_scripts: art.querySelectorAll('script[type^="math/tex"]').length,
      rendered: art.querySelectorAll(".MathJax_SVG").length,
      errors: (art.textContent.match(/Math Processing Error/g) || []).length,
      raw: (text.match(/\\$[^$\\s][^$]*\\$|\\\\\\(|\\\\\\[/g) || []).slice(0, 5),
      imgs: imgs,
    }});
  }};
  // Poll until every formula is typeset and shown (or 15 s have passed), then
  // report what is there.
  let tries = 0;
  const poll = () => {{
    const art = d.querySelector("article") || d.body;
    const all = art.querySelectorAll('script[type^="math/tex"]').length;
    const typeset = art.querySelectorAll(".MathJax_SVG").length;
    const ready = all > 0 && typeset >= all && hiddenDisplays(art) === 0;
    if (ready || ++tries > 75) done(); else setTimeout(poll, 200);
  }};
  poll();
}};
</script>
"""


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return name
    sys.exit("browser_check: no chromium found (Debian package: chromium)")


def browse(url, *args):
    cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           "--hide-scrollbars", "--virtual-time-budget=20000", *args, url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def main():
    site, screens, pages = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3:]
    screens.mkdir(parents=True, exist_ok=True)
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    problems = []
    try:
        for page in pages:
            check = site / f"_check-{page}"
            check.write_text(CHECK_PAGE.format(page=page))
            dom = browse(f"{base}/{check.name}", "--dump-dom").stdout
            check.unlink()
            m = re.search(r'<pre id="result">(.*?)</pre>', dom, re.S)
            if not m or m.group(1) == "pending":
                problems.append(f"{page}: the check page did not finish (no result in the DOM)")
                continue
            r = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&")
                           .replace("&lt;", "<").replace("&gt;", ">"))
            print(f"{page}: {r['math_scripts']} formulas, {r['rendered']} typeset, "
                  f"{len(r['imgs'])} images, widths {[i['width'] for i in r['imgs']]}")
            if not r["mathjax"]:
                problems.append(f"{page}: MathJax did not load")
            if r["math_scripts"] == 0 or r["rendered"] < r["math_scripts"]:
                problems.append(f"{page}: {r['rendered']} of {r['math_scripts']} formulas typeset")
            if r["hidden_displays"]:
                problems.append(f"{page}: {r['hidden_displays']} display formulas not visible")
            if r["errors"]:
                problems.append(f"{page}: {r['errors']} MathJax errors")
            if r["raw"]:
                problems.append(f"{page}: raw TeX left in the text: {r['raw']}")
            for img in r["imgs"]:
                if not img["complete"] or img["width"] <= 0:
                    problems.append(f"{page}: figure {img['src']} did not load")
            shot = screens / (pathlib.Path(page).stem + ".png")
            browse(f"{base}/{page}", f"--screenshot={shot}", "--window-size=1280,1400")
            if not shot.exists() or shot.stat().st_size == 0:
                problems.append(f"{page}: no screenshot")
            else:
                print(f"{page}: screenshot {shot}")
    finally:
        server.shutdown()
    for p in problems:
        print(p)
    print(f"browser_check: {len(pages)} pages, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
