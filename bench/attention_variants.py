"""The attention variants' names, in the registry's order, read from the registry itself
(nn/attention_variants.cpp), so the Python drivers spell no list of their own.

    from attention_variants import variant_names   # ["standard", "w2", "triple"]
"""
import os
import re

REGISTRY = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "nn", "attention_variants.cpp")


def variant_names(registry=REGISTRY):
    """Each entry's name: the string after its AttentionKind, e.g. {AttentionKind::W2, "w2", ...}."""
    with open(registry) as f:
        names = re.findall(r'\{AttentionKind::\w+,\s*"([^"]+)"', f.read())
    if not names:
        raise SystemExit(f"{registry}: no attention variant found")
    return names
