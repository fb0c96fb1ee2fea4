#!/usr/bin/python3
"""Reads a safetensors file with numpy alone and checks it: the file format an
independent reader sees, and every tensor's values.

  read_safetensors.py FILE [--npy-dir DIR] [--expect SPEC]... [--metadata KEY=VALUE]...
      Parses FILE's header by the spec, checks the layout (8-byte length,
      space-padded JSON, offsets that tile the data section exactly), then
      checks tensors: each DIR/<name>.npy must match the tensor of that name
      bit for bit (a .npy without a tensor is a failure); each SPEC
      "name=dtype[d0,d1,...]:v0,v1,..." (values row-major, nan/inf allowed)
      must match exactly. Every tensor must be checked by one of the two.
      Exit status 0 when everything matches, 1 otherwise (with a report).

  read_safetensors.py --write FILE
      Writes a reference file the way another writer might (spaced JSON,
      metadata last, data not in name order) for ropegrad to load.

Used by tests/test_checkpoint.cpp (PythonInterop); needs /usr/bin/python3 with numpy.
"""
import argparse
import json
import os
import struct
import sys

import numpy as np

DTYPES = {"F32": "<f4", "F64": "<f8", "I64": "<i8", "BOOL": "|b1"}
NAMES = {"float32": "F32", "float64": "F64", "int64": "I64", "bool": "BOOL"}


def read(path):
    """(tensors dict name -> ndarray, metadata dict); raises ValueError on a bad layout."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        raise ValueError(f"{path}: {len(blob)} bytes, shorter than the length field")
    (n,) = struct.unpack("<Q", blob[:8])
    if n % 8 != 0:
        raise ValueError(f"header length {n} is not a multiple of 8")
    if 8 + n > len(blob):
        raise ValueError(f"header length {n} exceeds the file")
    text = blob[8:8 + n].decode("utf-8")
    if text.rstrip(" ") != text.rstrip() or not text.startswith("{"):
        raise ValueError("header must start with '{' and be padded with spaces only")

    def no_duplicates(pairs):
        keys = [k for k, _ in pairs]
        if len(keys) != len(set(keys)):
            raise ValueError(f"duplicate keys in {keys}")
        return dict(pairs)

    header = json.loads(text, object_pairs_hook=no_duplicates)
    metadata = header.pop("__metadata__", {})
    data = blob[8 + n:]
    spans = sorted((tuple(info["data_offsets"]), name) for name, info in header.items())
    pos = 0
    for (begin, end), name in spans:
        if begin != pos:
            raise ValueError(f"tensor {name} starts at {begin}, expected {pos} (gap or overlap)")
        pos = end
    if pos != len(data):
        raise ValueError(f"tensors cover {pos} bytes of a {len(data)}-byte data section")
    tensors = {}
    for name, info in header.items():
        if set(info) != {"dtype", "shape", "data_offsets"}:
            raise ValueError(f"tensor {name} has fields {sorted(info)}")
        dtype = np.dtype(DTYPES[info["dtype"]])
        begin, end = info["data_offsets"]
        shape = tuple(info["shape"])
        if end - begin != int(np.prod(shape, dtype=np.int64)) * dtype.itemsize:
            raise ValueError(f"tensor {name}: shape {shape} does not match offsets {begin, end}")
        tensors[name] = np.frombuffer(data[begin:end], dtype=dtype).reshape(shape)
    return tensors, metadata


def parse_spec(spec):
    name, rest = spec.rsplit("=", 1)
    head, values = rest.split(":", 1)
    dtype, dims = head.split("[", 1)
    shape = tuple(int(d) for d in dims.rstrip("]").split(",") if d.strip())
    np_dtype = np.dtype(DTYPES[NAMES[dtype]])
    if np_dtype == np.bool_:
        vals = [v in ("1", "true", "True") for v in values.split(",") if v]
    else:
        vals = [float(v) if np_dtype.kind == "f" else int(v) for v in values.split(",") if v]
    return name, np.array(vals, dtype=np_dtype).reshape(shape)


def same(a, b):
    """Equal dtype, shape and bytes (so NaN payloads and -0.0 count)."""
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def check(args):
    try:
        tensors, metadata = read(args.file)
    except (ValueError, KeyError, UnicodeDecodeError, json.JSONDecodeError) as e:
        print(f"FAIL {args.file}: {e}")
        return 1
    failures = 0
    checked = set()
    if args.npy_dir:
        files = {f[:-4] for f in os.listdir(args.npy_dir) if f.endswith(".npy")}
        if files - set(tensors):
            print(f"FAIL {sorted(files - set(tensors))}: in {args.npy_dir} but not in the file")
            failures += 1
        for name in sorted(files & set(tensors)):
            want = np.load(os.path.join(args.npy_dir, name + ".npy"))
            ok = same(tensors[name], want)
            got = tensors[name]
            print(f"{'OK  ' if ok else 'FAIL'} {name} {got.dtype}{list(got.shape)} vs .npy"
                  + ("" if ok else f": got {got!r}, want {want!r}"))
            failures += not ok
            checked.add(name)
    for spec in args.expect:
        name, want = parse_spec(spec)
        got = tensors.get(name)
        ok = got is not None and same(got, want)
        print(f"{'OK  ' if ok else 'FAIL'} {name} vs {spec}"
              + ("" if ok else f": got {got!r}, want {want!r}"))
        failures += not ok
        checked.add(name)
    for item in args.metadata:
        key, value = item.split("=", 1)
        ok = metadata.get(key) == value
        print(f"{'OK  ' if ok else 'FAIL'} metadata {key}={value!r}"
              + ("" if ok else f": got {metadata.get(key)!r}"))
        failures += not ok
    for name in sorted(set(tensors) - checked):
        print(f"FAIL {name}: not checked by any --npy-dir file or --expect")
        failures += 1
    print(f"{len(tensors)} tensors, {failures} failures")
    return 1 if failures else 0


def write_reference(path):
    tensors = {
        "b.weight": np.array([[0.5, -1.0], [2.0, 0.0]], dtype="<f4"),
        "a.count": np.array(7, dtype="<i8"),  # 0-d
        "caf\u00e9 \"q\"": np.array([1.0, -0.0, np.inf], dtype="<f8"),
        "mask": np.array([True, False, False, True]),
        "empty": np.zeros((2, 0), dtype="<f4"),
    }
    order = ["mask", "caf\u00e9 \"q\"", "empty", "b.weight", "a.count"]  # not name order
    header, chunks, pos = {}, [], 0
    for name in order:
        raw = tensors[name].tobytes()
        dtype = {v: k for k, v in DTYPES.items()}[tensors[name].dtype.str]
        header[name] = {"shape": list(tensors[name].shape), "data_offsets": [pos, pos + len(raw)],
                        "dtype": dtype}
        chunks.append(raw)
        pos += len(raw)
    header["__metadata__"] = {"writer": "numpy", "note": "tab\there"}
    text = json.dumps(header, indent=1).encode("utf-8")  # ASCII with \u escapes, spaced, newlines
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(chunks))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file")
    parser.add_argument("--npy-dir")
    parser.add_argument("--expect", action="append", default=[])
    parser.add_argument("--metadata", action="append", default=[])
    parser.add_argument("--write", action="store_true", help="write a reference file instead of checking")
    args = parser.parse_args()
    return write_reference(args.file) if args.write else check(args)


if __name__ == "__main__":
    sys.exit(main())
