"""_grouped.py - grouped (MoE) quantization: nvfp4kit.quantize_grouped over
the library's nvfp4_quantize_grouped (nvfp4/grouped.h), the bytes of
`nvfp4 quantize --groups M1,M2,...` (docs/semantics.md, "Grouped (MoE)
quantization"). No numerics here: every byte comes from the C library."""
import ctypes

import numpy as np

from . import _lib
from ._core import _Input, _opts, _TSet
from ._lib import Error, lib


class Grouped:
    """A stacked tensor quantized with one global amax per group (expert):
    data (the stacked codes, rows x cols/2), scale (the stacked linear scales,
    rows x cols/16), scale_swizzled (one 128x4 segment per non-empty group,
    each padded to 128 rows), amax (float32 [groups], 0 for an empty group),
    m_sizes (int64 [groups]). save_bundle(path) writes the grouped bundle
    (docs/file-formats.md 3.7), which nvfp4kit.verify reads like any bundle
    and reports on per expert."""

    def __init__(self, c, x_array, x_dtype):
        n = c.ngroups
        self.rows, self.cols, self.recipe = int(c.rows), int(c.cols), _recipe_name(c)
        self.m_sizes = np.array([c.m_sizes[i] for i in range(n)], dtype=np.int64)
        self.amax = np.ctypeslib.as_array(c.amax, shape=(n,)).copy()
        self.data = np.ctypeslib.as_array(c.data, shape=(c.data_bytes,)).copy().reshape(self.rows, -1)
        self.scale = np.ctypeslib.as_array(c.scale, shape=(self.rows * c.scale_cols,)).copy().reshape(
            self.rows, c.scale_cols)
        zc = (c.scale_cols + 3) // 4 * 4
        self.scale_swizzled = np.ctypeslib.as_array(c.scale_swizzled, shape=(c.swizzled_bytes,)).copy().reshape(
            -1, zc)
        self._x, self._x_dtype = x_array, x_dtype
        self._opts = _lib.QuantOpts.from_buffer_copy(c.opts)

    def components(self):
        """{bundle name: array}: what a grouped kernel writes, under the bundle's names."""
        return {"data": self.data, "scale": self.scale, "scale_swizzled": self.scale_swizzled, "amax": self.amax}

    def _with_c(self, fn):
        """Runs fn on the C library's grouped result for the same input (quantized again: a Grouped holds
        copies, and the library's own pass is what dequantize and save_bundle must use)."""
        g = _lib.Grouped()
        err = _lib.CError()
        m = (_lib.c_size * len(self.m_sizes))(*[int(v) for v in self.m_sizes])
        _lib.check(lib.nvfp4_quantize_grouped(self._x.ctypes.data, self._x_dtype, self.rows, self.cols, m,
                                              len(self.m_sizes), ctypes.byref(self._opts), ctypes.byref(g),
                                              ctypes.byref(err)), err)
        try:
            if (np.ctypeslib.as_array(g.data, shape=(g.data_bytes,)).tobytes() != self.data.tobytes() or
                    np.ctypeslib.as_array(g.amax, shape=(g.ngroups,)).tobytes() != self.amax.tobytes()):
                raise Error("the input no longer gives this quantization's codes: it was changed after "
                            "quantize_grouped (nvfp4kit reads it in place); quantize it again")
            return fn(g, err)
        finally:
            lib.nvfp4_grouped_free(ctypes.byref(g))

    def dequantize(self):
        """fp32 [rows, cols], each group with its own amax (the recipe's formula)."""
        out = np.empty((self.rows, self.cols), dtype=np.float32)
        self._with_c(lambda g, err: _lib.check(lib.nvfp4_grouped_dequantize(ctypes.byref(g), out.ctypes.data,
                                                                             ctypes.byref(err)), err))
        return out

    def save_bundle(self, path):
        """Writes the grouped bundle (the bytes of `nvfp4 quantize --groups`): *.safetensors or a folder."""
        def build(g, err):
            with _TSet() as s:
                _lib.check(lib.nvfp4_grouped_bundle_build(ctypes.byref(g), self._x.ctypes.data, self._x_dtype,
                                                          s.ref(), ctypes.byref(err)), err)
                s.write(path)
        self._with_c(build)

    def __repr__(self):
        return "<nvfp4kit.Grouped %d x %d recipe %s, %d groups %s>" % (
            self.rows, self.cols, self.recipe, len(self.m_sizes), ",".join(map(str, self.m_sizes.tolist())))


def _recipe_name(c):
    return lib.nvfp4_recipe_get_info(c.recipe).contents.name.decode()


def quantize_grouped(x, m_sizes, recipe="te", block=None):
    """Quantizes the stacked 2-D float32 / bfloat16 array or CPU torch tensor x
    whose consecutive row groups of m_sizes[i] rows (the tokens of expert i; 0
    for an expert with none; they sum to the rows of x) each get their own
    global amax: TransformerEngine's split_quantize and mslk's
    nvfp4_quantize_stacked. Rowwise and RN; block None takes the recipe's.
    Returns a Grouped."""
    inp = _Input(x)
    try:
        sizes = [int(v) for v in (m_sizes.tolist() if hasattr(m_sizes, "tolist") else m_sizes)]
    except (TypeError, ValueError):
        raise Error("m_sizes must be a sequence of row counts, got %r" % (m_sizes,)) from None
    if not sizes:
        raise Error("m_sizes: no groups")
    sizes = [_lib.int_arg(v, "m_sizes[%d]" % i, 0, (1 << 63) - 1) for i, v in enumerate(sizes)]
    o, _ = _opts(recipe, block)
    m = (_lib.c_size * len(sizes))(*sizes)
    g = _lib.Grouped()
    err = _lib.CError()
    _lib.check(lib.nvfp4_quantize_grouped(ctypes.c_void_p(inp.ptr), inp.dtype, inp.rows, inp.cols, m, len(sizes),
                                          ctypes.byref(o), ctypes.byref(g), ctypes.byref(err)), err)
    try:
        return Grouped(g, inp.array, inp.dtype)
    finally:
        lib.nvfp4_grouped_free(ctypes.byref(g))
