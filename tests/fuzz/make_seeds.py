#!/usr/bin/env python3
"""Writes the small hand-made seed corpus for the libFuzzer targets
(tests/fuzz/corpus/<reader>/). Standard library only. Re-run to refresh the
seeds; `make fuzz-merge` adds what fuzzing found."""
import json, os, struct, sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def put(reader, name, data):
    d = os.path.join(root, reader)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


def safetensors(tensors, meta=None):
    hdr, blob = {}, b""
    if meta:
        hdr["__metadata__"] = meta
    for name, dt, shape, raw in tensors:
        hdr[name] = {"dtype": dt, "shape": shape, "data_offsets": [len(blob), len(blob) + len(raw)]}
        blob += raw
    h = json.dumps(hdr, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + blob


def npy(descr, shape, raw, major=1):
    d = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (
        descr, "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")")
    pre = 10 if major == 1 else 12
    pad = -(pre + len(d) + 1) % 64
    h = (d + " " * pad + "\n").encode()
    ln = struct.pack("<H", len(h)) if major == 1 else struct.pack("<I", len(h))
    return b"\x93NUMPY" + bytes([major, 0]) + ln + h + raw


f32 = struct.pack("<8f", 1, -2, 0.5, 3, 0, -0.0, 6, 448)
meta = {"format_version": "1", "recipe": "te", "rounding": "rn", "block": "1x16", "rows": "1", "cols": "16"}
put("safetensors", "two", safetensors([("x", "F32", [2, 4], f32), ("data", "U8", [2, 2], b"\x12\x34\x56\x78")],
                                      {"k": "v"}))
put("safetensors", "empty", safetensors([]))
put("safetensors", "bf16", safetensors([("b", "BF16", [3], b"\x80\x3f\x00\x40\x00\xc0")]))
put("npy", "f4", npy("<f4", [2, 4], f32))
put("npy", "u1", npy("|u1", [3], b"\x01\x02\x03"))
put("npy", "u2v2", npy("<u2", [2], b"\x80\x3f\x00\x40", major=2))
put("npy", "scalar", npy("<f8", [], struct.pack("<d", 1.5)))

def tdir(storage, tensors, meta=None):
    m = {"format": "nvfp4kit-tensors", "format_version": "1", "storage": storage,
         "metadata": meta or {}, "tensors": []}
    bodies = []
    for name, dt, shape, raw in tensors:
        m["tensors"].append({"name": name, "file": name + "." + storage, "dtype": dt, "shape": shape,
                             "bytes": len(raw) if storage == "bin" else None})
        if storage == "npy":
            del m["tensors"][-1]["bytes"]
        bodies.append(raw)
    return json.dumps(m).encode() + b"\0" + b"\0\0".join(bodies)

put("tdir", "bin", tdir("bin", [("x", "F32", [2, 4], f32), ("data", "U8", [3], b"\x01\x10\x77")], {"a": "b"}))
put("tdir", "npy", tdir("npy", [("x", "F32", [2, 4], npy("<f4", [2, 4], f32))]))

# A complete te bundle: 1 x 16 input, rowwise.
x = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]
xb = struct.pack("<16f", *x)
data = bytes([0x10 | 0, 0x32, 0x54, 0x76, 0x98, 0xBA, 0xDC, 0xFE])
bm = dict(meta, tool="nvfp4kit", tool_version="0.1.0", seed="0", offset="0", rowwise="true", columnwise="false",
          rht="false", rht_signs="te", rht_sign_seed="0", rht_output="bf16", pad="false", x_dtype="F32",
          format="nvfp4kit-golden-bundle", elem="e2m1", scale_format="e4m3")
put("bundle", "te-1x16", safetensors([
    ("x", "F32", [1, 16], xb), ("dequant", "F32", [1, 16], xb), ("amax", "F32", [1], struct.pack("<f", 6.0)),
    ("data", "U8", [1, 8], data), ("scale", "U8", [1, 1], b"\x70"),
    ("scale_swizzled", "U8", [128, 4], b"\x70" + bytes(511))], bm))
print("seeds written under", root)
