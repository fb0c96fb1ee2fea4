#!/usr/bin/env python3
"""Chapter 18: the header of a ropegrad checkpoint, read with plain Python.

    checkpoint_header.py FILE [PREFIX [N]]

A safetensors file starts with 8 bytes (a little-endian length) and a JSON
header: the metadata, then one entry per tensor. Prints the metadata (the
per-tensor "crc32.NAME" checksums of chapter 14 only counted), then the first
N names, in sorted order, of the tensors whose name starts with PREFIX
(default: all; N default 4), "..." standing for the rest.
"""
import json
import struct
import sys

path = sys.argv[1]
prefix = sys.argv[2] if len(sys.argv) > 2 else ""
n = int(sys.argv[3]) if len(sys.argv) > 3 else 4
with open(path, "rb") as f:
    (length,) = struct.unpack("<Q", f.read(8))
    header = json.loads(f.read(length))
meta = header.pop("__metadata__")
crcs = [k for k in meta if k.startswith("crc32.")]
print({k: v for k, v in meta.items() if k not in crcs}, f"and {len(crcs)} crc32 checksums")
names = sorted(k for k in header if k.startswith(prefix))
print("[" + ", ".join(repr(x) for x in names[:n]) + (", ...]" if len(names) > n else "]"))
