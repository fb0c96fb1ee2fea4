"""A MkDocs hook (mkdocs.yml, `hooks:`) that makes the site's search work with
Debian's mkdocs-material 8.2.5.

Debian installs the theme under /usr/share/mkdocs/themes, where Python does
not see its `search` plugin, so `plugins: - search` is MkDocs' own. That
plugin's search/search_index.json has no "options" entry; the theme's search
worker reads `options.pipeline` while it builds the index, throws, and the
search box stays at "Initializing search" forever. Adding the options the
theme's own plugin would have written (lunr's whole pipeline: trimmer, stop
words, stemmer) fixes it; nothing is fetched from the network.
docs/tests/browser_check.py searches the built site for "RMSNorm".
"""
import json
import os


def on_post_build(config, **kwargs):
    path = os.path.join(config["site_dir"], "search", "search_index.json")
    if not os.path.exists(path):
        return
    with open(path, encoding="utf-8") as f:
        index = json.load(f)
    index.setdefault("options", {"pipeline": ["trimmer", "stopWordFilter", "stemmer"]})
    with open(path, "w", encoding="utf-8") as f:
        json.dump(index, f, ensure_ascii=False, separators=(",", ":"))
