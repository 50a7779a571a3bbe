#!/usr/bin/env python3
"""triton_gpu_oracle.py - do the third-party Triton NVFP4 kernels give on a GPU the
bytes the oracle tests take from the Triton interpreter?

tests/py/test_triton_oracles.py (mslk) and tests/py/test_fbgemm_verify.py (fbgemm)
run real Triton kernels on a CPU under TRITON_INTERPRET=1, with the interpreter's
fp32->fp8e4nv, fp32->bf16 and bf16->fp32 casts and the kernels' inline PTX replaced
by the GPU's (tests/py/triton_gpu_casts.py). That substitution is a model of the GPU;
this tool checks it on one:

    tools/triton_gpu_oracle.py prepare DIR    # here, CPU: inputs, interpreter outputs,
                                              # and the kernels' source files into DIR
    tools/triton_gpu_oracle.py compare DIR    # on a machine with a GPU, torch and triton:
                                              # the same kernels compiled for the GPU

`prepare` needs what the two tests need (torch, triton, mslk in build/third-party or
$MSLK_DIR, fbgemm-gpu-genai in build/third-party-fbgemm). It copies the kernels'
unchanged .py files into DIR (not into the repository), so that `compare` runs on a
machine where neither package is installed. `compare` prints one line per tensor
(identical, or how many code and scale bytes differ and where) and exits 0 when every
tensor is identical, 1 when some differ, 77 without a CUDA device or when no kernel
compiles for it. Both kernels write their codes with the inline PTX
cvt.rn.satfinite.e2m1x2.f32, which only Blackwell targets (sm_100a and later) have: on
an H100/H200 (sm_90) Triton's ptxas refuses them, and the tool says so for each.

fbgemm's kernel divides with Triton's `/` (div.full.f32 on a GPU, not correctly
rounded) where the interpreter divides exactly: its differences, if any, are expected
there and are reported, not hidden."""
import importlib.util
import os
import shutil
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _fbgemm_module(root):
    """fbgemm's fp4_quantize.py with fbgemm_gpu as a bare package (its __init__ loads a CUDA library)."""
    pkg = types.ModuleType("fbgemm_gpu")
    pkg.__path__ = [root]
    sys.modules.setdefault("fbgemm_gpu", pkg)
    return _load(os.path.join(root, "experimental", "gemm", "triton_gemm", "fp4_quantize.py"), "fbgemm_fp4_quantize")


def prepare(out):
    os.environ["TRITON_INTERPRET"] = "1"
    sys.path.insert(0, os.path.join(ROOT, "tests", "py"))
    import numpy as np
    import torch
    import test_fbgemm_verify as F
    import test_triton_oracles as T

    if T.MSLK is None:
        sys.exit("prepare: mslk not found (see tests/py/requirements-production.txt)")
    os.makedirs(os.path.join(out, "mslk"), exist_ok=True)
    shutil.copy(os.path.join(T._mslk_package_dir(), "quantize", "triton", "fp4_quantize.py"),
                os.path.join(out, "mslk", "fp4_quantize.py"))
    fb_root = F._fbgemm_dir()
    for rel in ("experimental/gemm/triton_gemm/fp4_quantize.py", "triton/__init__.py", "triton/common.py",
                "triton/quantize.py"):
        dst = os.path.join(out, "fbgemm_gpu", rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy(os.path.join(fb_root, rel), dst)
    arrays = {}
    runner = T.MslkTritonNVFP4("test_interpreter_casts_replaced")
    for name, x, bf16 in T.tensors() + T.more_tensors():
        if bf16 or name in T.NAN_RAISING:
            continue
        q, s, _ = runner.run_mslk(torch.from_numpy(x.copy()))
        arrays["mslk/%s/x" % name] = x
        arrays["mslk/%s/q" % name] = q.numpy()
        arrays["mslk/%s/s" % name] = s.numpy()
    fb = F._load_fbgemm()
    for name, xb in F.cases():
        q, s, _ = F.run_fbgemm(fb, xb, 0x00)
        arrays["fbgemm/%s/x" % name] = xb.view(torch.int16).numpy()  # bf16 bits
        arrays["fbgemm/%s/q" % name] = q.numpy()
        arrays["fbgemm/%s/s" % name] = s.numpy()
    np.savez(os.path.join(out, "interpreter.npz"), **arrays)
    print("prepare: %d tensors into %s" % (len([k for k in arrays if k.endswith("/x")]), out))


def _diff(name, got, want, what):
    import numpy as np
    got, want = np.asarray(got).reshape(-1), np.asarray(want).reshape(-1)
    if got.shape != want.shape:
        return "%s %s: %d bytes, the interpreter gave %d" % (name, what, got.size, want.size)
    bad = np.nonzero(got != want)[0]
    if not bad.size:
        return None
    i = int(bad[0])
    return "%s %s: %d of %d bytes differ (first at %d: GPU 0x%02X, interpreter 0x%02X)" % (
        name, what, bad.size, got.size, i, int(got[i]), int(want[i]))


def compare(src):
    import numpy as np
    import torch
    if not torch.cuda.is_available():
        print("compare: no CUDA device")
        return 77
    z = np.load(os.path.join(src, "interpreter.npz"))
    mslk = _load(os.path.join(src, "mslk", "fp4_quantize.py"), "mslk_fp4_quantize")
    fb = _fbgemm_module(os.path.join(src, "fbgemm_gpu"))
    names = sorted({k.rsplit("/", 1)[0] for k in z.files})
    differ = ran = 0
    refused = {}
    for key in names:
        who, name = key.split("/", 1)
        if who in refused:
            continue
        try:
            q, s = _run_on_gpu(who, key, z, mslk, fb)
        except Exception as e:  # the kernel does not compile for this GPU (sm_90: no e2m1x2 cvt)
            refused[who] = str(e).strip().splitlines()[-4:]
            print("%s: does not compile for this GPU (%s): %s" % (who, torch.cuda.get_device_name(),
                                                                   " ".join(refused[who])[:300]))
            continue
        ran += 1
        torch.cuda.synchronize()
        q = q.view(torch.uint8).cpu().numpy()
        s = s.view(torch.uint8).cpu().numpy()
        lines = [d for d in (_diff(key, q, z[key + "/q"], "codes"), _diff(key, s, z[key + "/s"], "scales")) if d]
        differ += bool(lines)
        print("\n".join(lines) if lines else "%s: identical (%d code bytes, %d scale bytes)" % (key, q.size, s.size))
    if not ran:
        print("compare: no kernel compiled for this GPU")
        return 77
    print("compare: %d of %d tensors run identical to the interpreter with the GPU's casts" % (ran - differ, ran))
    return 1 if differ else 0


def _run_on_gpu(who, key, z, mslk, fb):
    """One tensor through one kernel on the GPU: (codes, swizzled scales)."""
    import torch
    if who == "mslk":
        x = torch.from_numpy(z[key + "/x"]).cuda()
        pts = torch.abs(x).max().to(torch.float32) / (448.0 * 6.0)  # torchao's per_tensor_amax_to_scale
        return mslk.triton_quantize_nvfp4(x.contiguous(), pts.reciprocal())
    xb = torch.from_numpy(z[key + "/x"]).view(torch.bfloat16).cuda()
    gs = (448.0 * 6.0) / torch.amax(torch.abs(xb.flatten()), dim=-1).to(torch.float32)
    empty = torch.empty

    def zeroed(*a, **k):  # the padding fbgemm never writes: 0, as the interpreter run had it
        t = empty(*a, **k)
        t.view(torch.uint8).fill_(0)
        return t

    torch.empty = zeroed
    try:
        return fb.triton_scale_nvfp4_quant(xb, gs)
    finally:
        torch.empty = empty


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("prepare", "compare"):
        sys.exit("usage: triton_gpu_oracle.py prepare|compare DIR")
    if sys.argv[1] == "prepare":
        prepare(sys.argv[2])
    else:
        sys.exit(compare(sys.argv[2]))
