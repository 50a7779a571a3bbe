"""test_ue5m3_oracle.py - the UE5M3 cast nvfp4_ue5m3_from_f32 with
NVFP4_UE5M3_ML_DTYPES byte for byte against ml_dtypes' float8_e5m3fnu cast
(numpy astype), and every decoded code against ml_dtypes' value.

Inputs: each fp32 sign and exponent field with the fractions where a
3-bit round to nearest even can change (the half-way bit alone, with the
bit below, with the kept bit set), every 8191st bit pattern of the 2^32
space (about 524k values) and NaN payloads, through libnvfp4.so (next to
$NVFP4: <build>/lib/libnvfp4.so) with ctypes. The satfinite mode differs
only where documented (overflow, +Inf, negative values: 0xFE / 0x00 instead
of NaN), which the test checks on the same inputs.

Skipped unless numpy and ml_dtypes (with float8_e5m3fnu, ml_dtypes >= 0.5)
import and the library is built."""
import ctypes as C
import os
import unittest

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None

try:
    import ml_dtypes
    E5M3 = getattr(ml_dtypes, "float8_e5m3fnu", None)
except ImportError:  # pragma: no cover
    ml_dtypes = E5M3 = None

HERE = os.path.dirname(os.path.abspath(__file__))
NVFP4 = os.environ.get("NVFP4")


def lib_path():
    if NVFP4:
        p = os.path.join(os.path.dirname(os.path.dirname(NVFP4)), "lib", "libnvfp4.so")
        if os.path.exists(p):
            return p
    p = os.path.join(HERE, "..", "..", "build", "lib", "libnvfp4.so")
    return p if os.path.exists(p) else None


def inputs():
    """uint32 bit patterns where a 3-bit RNE can change, a stride, NaNs."""
    fr = np.array([0, 1, 0x7FFFF, 0x80000, 0x80001, 0xFFFFF, 0x100000, 0x17FFFF, 0x180000, 0x180001,
                   0x3FFFFF, 0x400000, 0x7FFFFF], dtype=np.uint64)
    se = np.arange(512, dtype=np.uint64) << np.uint64(23)
    edges = (se[:, None] | fr[None, :]).ravel()
    strided = np.arange(0, 1 << 32, 8191, dtype=np.uint64)
    nans = np.array([0x7F800001, 0x7FC00000, 0xFFC00000, 0xFFFFFFFF], dtype=np.uint64)
    return np.unique(np.concatenate([edges, strided, nans]).astype(np.uint32))


@unittest.skipIf(np is None or E5M3 is None or lib_path() is None,
                 "needs numpy, ml_dtypes with float8_e5m3fnu and libnvfp4.so")
class UE5M3AgainstMlDtypes(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        lib = C.CDLL(lib_path())
        f = lib.nvfp4_ue5m3_from_f32
        f.restype = C.c_uint8
        f.argtypes = [C.c_float, C.c_int]
        d = lib.nvfp4_ue5m3_to_f32
        d.restype = C.c_float
        d.argtypes = [C.c_uint8]
        cls.f, cls.d = staticmethod(f), staticmethod(d)
        cls.u = inputs()
        cls.x = cls.u.view(np.float32)

    def ours(self, mode):
        f = self.f
        return np.fromiter((f(float(v), mode) for v in self.x.tolist()), dtype=np.uint8, count=len(self.x))

    def test_decode_all_codes(self):
        want = np.arange(256, dtype=np.uint8).view(E5M3).astype(np.float32)
        got = np.array([self.d(c) for c in range(256)], dtype=np.float32)
        self.assertTrue(np.isnan(want[255]) and np.isnan(got[255]))
        self.assertEqual(got[:255].view(np.uint32).tolist(), want[:255].view(np.uint32).tolist())

    def test_ml_dtypes_mode(self):
        with np.errstate(all="ignore"):
            want = self.x.astype(E5M3).view(np.uint8)
        got = self.ours(1)
        bad = np.nonzero(got != want)[0]
        msg = ", ".join("0x%08X: 0x%02X vs 0x%02X" % (self.u[i], got[i], want[i]) for i in bad[:5])
        self.assertEqual(len(bad), 0, "%d of %d differ (%s)" % (len(bad), len(got), msg))
        self.assertGreater(len(got), 500000)
        planted = want.copy()
        planted[len(planted) // 2] ^= 1
        self.assertGreater(int(np.count_nonzero(got != planted)), 0, "a planted difference went unnoticed")

    def test_satfinite_differs_only_where_documented(self):
        with np.errstate(all="ignore"):
            want = self.x.astype(E5M3).view(np.uint8).copy()
        neg = (self.u >> 31).astype(bool) & ~np.isnan(self.x) & (self.x != 0)
        over = ~neg & ~np.isnan(self.x) & (self.x > 114688)
        want[neg] = 0x00
        want[over] = 0xFE
        got = self.ours(0)
        self.assertEqual(int(np.count_nonzero(got != want)), 0)
        self.assertGreater(int(np.count_nonzero(neg)), 100000)
        self.assertGreater(int(np.count_nonzero(over)), 1000)


if __name__ == "__main__":
    unittest.main()
