#!/usr/bin/env python3
"""vkernel.py - stand-in "kernels" for the verify CLI tests (stdlib only).

Reads a golden bundle (.safetensors), keeps the components a kernel would
write, optionally corrupts them the way a buggy kernel does, and writes the
result as a .safetensors file with no input tensor and no metadata.

usage: vkernel.py BUNDLE OUT [--keep data,scale,...] [--bug NAME] [--rename A=B]
bugs: swap-nibbles, neg-zero, linear-scales, pad-127, flip-amax, dequant-ulp,
      scale-plus-one, truncate-data
"""
import json
import struct
import sys


def read_st(path):
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    h = json.loads(b[8:8 + n])
    meta = h.pop("__metadata__", {})
    out = {}
    for k, v in h.items():
        o = v["data_offsets"]
        out[k] = [v["dtype"], list(v["shape"]), bytearray(b[8 + n + o[0]: 8 + n + o[1]])]
    return out, meta


def write_st(path, tensors, meta=None):
    h, off, blobs = {}, 0, []
    for k in sorted(tensors):
        dt, shape, data = tensors[k]
        h[k] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + len(data)]}
        off += len(data)
        blobs.append(bytes(data))
    if meta:
        h["__metadata__"] = meta
    hj = json.dumps(h).encode()
    hj += b" " * ((8 - len(hj) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hj)) + hj + b"".join(blobs))


def swz_offset(r, c, cols):
    tiles = (cols + 3) // 4
    return ((r // 128) * tiles + c // 4) * 512 + (r % 32) * 16 + ((r % 128) // 32) * 4 + (c % 4)


def main():
    src, dst = sys.argv[1], sys.argv[2]
    keep, bug, renames = None, None, []
    args = sys.argv[3:]
    while args:
        a = args.pop(0)
        if a == "--keep":
            keep = args.pop(0).split(",")
        elif a == "--bug":
            bug = args.pop(0)
        elif a == "--rename":
            renames.append(args.pop(0).split("="))
    t, meta = read_st(src)
    t.pop("x", None)
    if bug == "swap-nibbles":
        d = t["data"][2]
        for i in range(len(d)):
            d[i] = ((d[i] & 15) << 4) | (d[i] >> 4)
    elif bug == "neg-zero":
        d = t["data"][2]
        for i in range(len(d)):
            if d[i] & 0x0F == 0x8:
                d[i] &= 0xF0
            if d[i] & 0xF0 == 0x80:
                d[i] &= 0x0F
    elif bug == "linear-scales":
        lin = t["scale"][2]
        z = t["scale_swizzled"][2]
        z[:] = bytes(len(z))
        z[: len(lin)] = lin
    elif bug == "pad-127":
        rows, cols = t["scale"][1]
        z = t["scale_swizzled"][2]
        used = {swz_offset(r, c, cols) for r in range(rows) for c in range(cols)}
        for i in range(len(z)):
            if i not in used:
                z[i] = 127
    elif bug == "swizzle-padded-stride":  # the flat index r * C + k decoded with the padded C as the row stride
        lin = t["scale"][2]
        rows, cols = t["scale"][1]
        z = t["scale_swizzled"][2]
        z[:] = bytes(len(z))
        cp = (cols + 3) // 4 * 4
        for r in range(rows):
            for c in range(cols):
                f = r * cols + c
                o = swz_offset(f // cp, f % cp, cols)
                if o < len(z):
                    z[o] = lin[r * cols + c]
    elif bug == "flip-amax":
        a = t["amax"][2]
        v = struct.unpack("<f", a)[0]
        a[:] = struct.pack("<f", v * 2)
    elif bug == "dequant-ulp":
        d = t["dequant"][2]
        u = struct.unpack("<I", d[4:8])[0]
        d[4:8] = struct.pack("<I", u + 1)
    elif bug == "scale-plus-one":
        s = t["scale"][2]
        s[0] += 1
    elif bug == "truncate-data":
        d = t["data"]
        d[1][0] -= 1
        d[2] = d[2][: -d[1][1]]
    elif bug:
        sys.exit("unknown bug " + bug)
    if keep is not None:
        t = {k: v for k, v in t.items() if k in keep}
    for a, b in renames:
        t[b] = t.pop(a)
    write_st(dst, t)


if __name__ == "__main__":
    main()
