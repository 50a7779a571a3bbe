"""_core.py - quantize, dequantize, bundles and recipes over libnvfp4 (ctypes).

No numerics happen here: every code, scale, amax and dequantized value is
written by the C library (nvfp4_quantize_into, nvfp4_dequantize,
nvfp4_scale_swizzle, nvfp4_bundle_build / nvfp4_bundle_to_quantized, the
safetensors reader and writer). Python only checks arguments, allocates the
output buffers (numpy) and passes pointers.
"""
import ctypes
import os
import sys

import numpy as np

from . import _lib
from ._lib import Error, lib

_U64_MAX = (1 << 64) - 1


# ---- input arrays ---------------------------------------------------------------------------------------------

def _is_torch(x):
    """A torch.Tensor, subclasses included (nn.Parameter, user subclasses); torch is not imported for it:
    a tensor can only exist once torch is."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def _bf16_dtype():
    try:
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    except ImportError:  # pragma: no cover - ml_dtypes absent: bf16 numpy arrays cannot exist either
        return None


class _Input:
    """A 2-D float32 / bfloat16 input as the C library reads it: a pointer to
    row-major elements, kept alive by `keep`. Zero-copy for C-contiguous
    numpy arrays and CPU torch tensors; anything else is copied once."""

    def __init__(self, x, what="x"):
        self.torch_device = None
        if _is_torch(x):
            import torch
            _check_torch_storage(x, what)
            if x.dtype not in (torch.float32, torch.bfloat16):
                raise Error("%s: torch dtype %s is not supported (float32 or bfloat16)" % (what, x.dtype))
            if x.dim() != 2:
                raise Error("%s: a 2-D tensor is needed, got %d-D shape %s" % (what, x.dim(), tuple(x.shape)))
            if x.device.type != "cpu":
                self.torch_device = x.device
                x = x.detach().to("cpu")  # CUDA (or other) tensors: copied to the host
            x = _torch_contiguous(x.detach(), what)  # expanded (stride-0) and strided views: copied once
            self.keep = x
            self.rows, self.cols = int(x.shape[0]), int(x.shape[1])
            self.dtype = _lib.DTYPE_F32 if x.dtype == torch.float32 else _lib.DTYPE_BF16
            self.ptr = x.data_ptr()
            self.is_torch = True
            # the bundle's x: the same bytes as a numpy array (shares memory)
            self.array = x.view(torch.int16).numpy().view(np.uint16) if self.dtype == _lib.DTYPE_BF16 \
                else x.numpy()
            return
        self.is_torch = False
        if not isinstance(x, np.ndarray):
            raise Error("%s: expected a numpy array or a torch tensor, got %s" % (what, type(x).__name__))
        bf16 = _bf16_dtype()
        if x.dtype == np.float32 or x.dtype == np.dtype(">f4"):
            self.dtype = _lib.DTYPE_F32
            want = np.dtype("<f4")
        elif bf16 is not None and x.dtype == bf16:
            self.dtype = _lib.DTYPE_BF16
            want = bf16
        else:
            raise Error("%s: dtype %s is not supported (float32, or ml_dtypes.bfloat16)" % (what, x.dtype))
        if x.ndim != 2:
            raise Error("%s: a 2-D array is needed, got %d-D shape %s" % (what, x.ndim, x.shape))
        try:
            x = np.ascontiguousarray(x, dtype=want)  # no copy when it already is
        except (MemoryError, ValueError):  # numpy: "array is too big" or out of memory
            raise Error("%s: shape %s is too large to copy into a contiguous buffer" % (what, x.shape)) from None
        self.keep = x
        self.array = x if self.dtype == _lib.DTYPE_F32 else x.view(np.uint16)
        self.rows, self.cols = x.shape
        self.ptr = x.ctypes.data


def _check_torch_storage(t, what):
    """Refuses the torch tensors whose elements are not in one strided host or device buffer: nested, sparse
    (COO, CSR, ...), MKL-DNN and meta tensors (the last hold no data at all)."""
    import torch
    if t.is_nested:
        raise Error("%s: a nested tensor is not supported (a 2-D strided tensor is needed)" % what)
    if t.layout != torch.strided:
        raise Error("%s: a tensor of layout %s is not supported: pass a dense one (t.to_dense())"
                    % (what, str(t.layout).replace("torch.", "")))
    if t.device.type == "meta":
        raise Error("%s: a meta tensor holds no data (shape %s only)" % (what, tuple(t.shape)))


def _torch_contiguous(t, what):
    """t.contiguous(), an Error when the copy cannot be made (torch raises RuntimeError for a size that
    overflows, e.g. an expanded view of 2^31 x 2^31 elements)."""
    try:
        return t.contiguous()
    except (RuntimeError, MemoryError) as e:
        raise Error("%s: shape %s cannot be copied into a contiguous buffer (%s)"
                    % (what, tuple(t.shape), str(e).split("\n")[0])) from None


# ---- options --------------------------------------------------------------------------------------------------

def _u64(v, name):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= int(v) <= _U64_MAX:
        raise Error("%s must be an integer from 0 to 2^64-1, got %s" % (name, _lib._short(v)))
    return int(v)


def _opts(recipe="te", block=None, rounding="rn", seed=0, offset=0, rowwise=True, columnwise=False, rht=False,
          rht_signs="te", pad=False, rht_fp32=False, global_scale_inverted=False):
    o = _lib.QuantOpts()
    lib.nvfp4_quant_opts_init(ctypes.byref(o))
    rb = recipe_name(recipe)
    o.recipe = rb
    v = ctypes.c_int()
    if block in (None, "default"):
        o.block = 0
    elif isinstance(block, str) and lib.nvfp4_block_parse(_lib.text_arg(block, "block"), ctypes.byref(v)):
        o.block = v.value
    else:
        raise Error("bad block %r (1x16, 16x16, 1x32 or 'default')" % (block,))
    if isinstance(rounding, str) and lib.nvfp4_rounding_parse(_lib.text_arg(rounding, "rounding"), ctypes.byref(v)):
        o.rounding = v.value
    else:
        raise Error("bad rounding %r (rn or sr)" % (rounding,))
    o.seed = _u64(seed, "seed")
    o.offset = _u64(offset, "offset")
    o.rowwise, o.columnwise = bool(rowwise), bool(columnwise)
    if not o.rowwise and not o.columnwise:
        raise Error("rowwise and columnwise are both False: nothing to compute")
    o.rht = bool(rht)
    o = _rht_signs(o, rht_signs)
    o.rht_fp32, o.pad = bool(rht_fp32), bool(pad)
    o.global_scale_inverted = bool(global_scale_inverted)
    return o, rb


def _rht_signs(o, rht_signs):
    """o with rht_signs applied as the library's option table reads it (te, seed:N with N in ASCII decimal
    digits, or none: the CLI's --rht-signs), or an Error naming the allowed values."""
    if not isinstance(rht_signs, str):
        row = lib.nvfp4_option_find(b"rht_signs").contents
        raise Error("bad rht_signs %r (%s)" % (rht_signs, row.allowed.decode()))
    opts, err = _lib.Options(), _lib.CError()
    lib.nvfp4_options_init(ctypes.byref(opts))
    opts.quant = o
    _lib.check(lib.nvfp4_options_set(ctypes.byref(opts), b"rht_signs", _lib.text_arg(rht_signs, "rht_signs"),
                                     ctypes.byref(err)), err)
    return opts.quant


def recipe_name(recipe):
    """The recipe's name as the bytes the library takes; an Error for a non-string or unknown name."""
    if not isinstance(recipe, str):
        raise Error("recipe must be a name (nvfp4kit.recipes()), got %r" % (recipe,))
    rb = _lib.text_arg(recipe, "recipe")
    if not lib.nvfp4_recipe_find(rb):
        raise Error("unknown recipe '%s' (%s)" % (recipe, ", ".join(r["name"] for r in recipes())))
    return rb


def _recipe_info(ptr):
    i = lib.nvfp4_recipe_get_info(ptr).contents
    return {"name": i.name.decode(), "summary": i.summary.decode(), "provenance": i.provenance.decode(),
            "elements": "e4m3" if i.elem == _lib.ELEM_E4M3 else "e2m1",
            "scales": lib.nvfp4_scale_format_name(i.scale_format).decode(),
            "block": lib.nvfp4_block_name(i.default_block).decode(),
            "global_amax": bool(i.has_global_amax), "sr": bool(i.supports_sr)}


def recipes():
    """The recipes of the library, as `nvfp4 table --recipes` lists them: a
    list of dicts (name, summary, provenance, elements, scales, block,
    global_amax, sr)."""
    return [_recipe_info(lib.nvfp4_recipe_at(i)) for i in range(lib.nvfp4_recipe_count())]


# ---- results --------------------------------------------------------------------------------------------------

class Orientation:
    """One stored orientation of a quantization (rowwise: the tensor as
    given; columnwise: its transpose), under the golden bundle's names:
    data (uint8 [prows, pcols/2], element 2j in the low nibble; MXFP8: one
    E4M3 byte per element), scale (uint8 [scale_rows, scale_cols]: E4M3 or
    UE8M0 bytes), scale_swizzled (the cuBLAS 128x4 layout, padding zero),
    amax (float32 [1]; [prows] for a row-scaled recipe, one per stored row;
    None for MX recipes). Arrays are torch tensors when the
    input was one (on its device)."""

    def __init__(self, parent, colwise, data, scale, amax, rows, cols, prows, pcols, rht, row_amax=None):
        self._parent = parent
        self._row_amax = row_amax  # row-scaled recipes: float32 [prows], the amax of each stored row
        self.columnwise = colwise
        self._data, self._scale = data, scale
        self._amax = amax  # numpy float32 [1] or None
        self.rows, self.cols, self.prows, self.pcols = rows, cols, prows, pcols
        self.rht = rht
        self._swz = None

    def _out(self, a):
        return self._parent._wrap(a)

    @property
    def data(self):
        return self._out(self._data)

    @property
    def scale(self):
        return self._out(self._scale)

    @property
    def amax(self):
        """The bundle's amax: float32 [1]; for a row-scaled recipe (te-rowscaled) float32 [prows], the amax
        of each stored row, which its scales use (the bundle stores that); None for MX recipes."""
        if self._row_amax is not None:
            return self._out(self._row_amax)
        return None if self._amax is None else self._out(self._amax)

    @property
    def scale_swizzled(self):
        if self._swz is None:  # computed on first use, by the library
            r, c = self._scale.shape
            n = lib.nvfp4_swizzled_size(r, c)
            if n == 0:
                raise Error("scale matrix %d x %d: swizzled size overflows" % (r, c))
            swz = np.empty((-(-r // 128) * 128, -(-c // 4) * 4), dtype=np.uint8)
            assert swz.size == n
            lib.nvfp4_scale_swizzle(self._scale.ctypes.data, r, c, swz.ctypes.data)
            self._swz = swz
        return self._out(self._swz)

    def dequantize(self):
        """fp32 values of the logical shape (padding dropped); RHT data stays
        in the Hadamard domain."""
        return self._parent.dequantize(columnwise=self.columnwise)

    def data_fp4x2(self):
        """data viewed as torch.float4_e2m1fn_x2 (the same bytes)."""
        import torch
        return _torch_view(self.data, torch.float4_e2m1fn_x2)

    def scale_e4m3(self):
        """scale viewed as torch.float8_e4m3fn (torch.float8_e8m0fnu for MX recipes); an Error for the
        UE5M3 recipes, which torch has no dtype for."""
        import torch
        if self._parent.recipe_info["scales"] == "ue5m3":
            raise Error("recipe %s has UE5M3 scales and torch has no UE5M3 dtype: read .scale (uint8), e.g. "
                        "with numpy's .view(ml_dtypes.float8_e5m3fnu)" % self._parent.recipe)
        fmt = torch.float8_e8m0fnu if self._parent.recipe_info["scales"] == "ue8m0" else torch.float8_e4m3fn
        return _torch_view(self.scale, fmt)

    @property
    def per_token_scale(self):
        """float32 [stored rows]: the per-token factor p of a per-token recipe (flashinfer-pertoken: FlashInfer's
        FP32 [M] scale, 1/S_enc of each row's amax, 0 for a zero row; dequantized values are (fp4 * s) * p), or
        None for a recipe without one."""
        if self._row_amax is None:
            return None
        out = np.empty(self._row_amax.shape[0], dtype=np.float32)
        if not lib.nvfp4_per_token_scales(self._parent._recipe, self._row_amax.ctypes.data, out.size,
                                          out.ctypes.data):
            return None
        return self._out(out)

    def components(self, suffix=None):
        """The bundle components of this orientation: {name: array}."""
        s = ("_t" if self.columnwise else "") if suffix is None else suffix
        d = {"data" + s: self.data, "scale" + s: self.scale, "scale" + s + "_swizzled": self.scale_swizzled}
        if self._amax is not None:
            d["amax" + s] = self.amax
        p = self.per_token_scale
        if p is not None:
            d["per_token_scale" + s] = p
        return d

    def __repr__(self):
        return "<nvfp4kit orientation %s %d x %d, amax %s>" % ("columnwise" if self.columnwise else "rowwise",
                                                              self.rows, self.cols,
                                                              None if self._amax is None else float(self._amax[0]))


def _torch_view(t, dtype):
    import torch
    if not isinstance(t, torch.Tensor):
        t = torch.from_numpy(np.ascontiguousarray(t))
    return t.view(dtype)


class Quantized:
    """The result of quantize() or load_bundle(): .row / .col (Orientation or
    None), the resolved options (recipe, block, rounding, seed, offset, rht,
    ...) and the input shape."""

    def __init__(self, recipe_ptr, opts, recipe_bytes, x_keep, x_array, x_dtype, rows, cols, torch_out, device):
        self._recipe = recipe_ptr
        self._opts = opts
        self._recipe_bytes = recipe_bytes
        self._x_keep, self._x, self._x_dtype = x_keep, x_array, x_dtype
        self.rows, self.cols = rows, cols
        self._torch, self._device = torch_out, device
        self.recipe_info = _recipe_info(recipe_ptr)
        self.row = self.col = None
        self._x_checked = False  # True when x is a private read-only copy (load_bundle): no re-check needed

    # arrays handed out: numpy, or torch tensors sharing the numpy memory
    def _wrap(self, a):
        if not self._torch:
            return a
        import torch
        t = torch.from_numpy(a)
        return t if self._device is None else t.to(self._device)

    @property
    def recipe(self):
        return self.recipe_info["name"]

    @property
    def options(self):
        o = self._opts
        buf = ctypes.create_string_buffer(32)
        lib.nvfp4_options_format(ctypes.byref(o), lib.nvfp4_option_find(b"rht-signs").contents.id, buf, len(buf))
        signs = buf.value.decode()
        return {"recipe": self.recipe, "block": lib.nvfp4_block_name(o.block).decode(),
                "rounding": lib.nvfp4_rounding_name(o.rounding).decode(), "seed": o.seed, "offset": o.offset,
                "rowwise": self.row is not None, "columnwise": self.col is not None, "rht": bool(o.rht),
                "rht_signs": signs, "pad": bool(o.pad), "rht_fp32": bool(o.rht_fp32),
                "global_scale_inverted": bool(o.global_scale_inverted)}

    @property
    def x(self):
        """The input (float32 or bfloat16 as given), or None."""
        return self._x_keep

    def _qt(self, o):
        t = _lib.QTensor()
        if o is None:
            return t
        t.rows, t.cols, t.prows, t.pcols = o.rows, o.cols, o.prows, o.pcols
        t.data = o._data.ctypes.data_as(_lib.c_u8p)
        t.data_bytes = o._data.nbytes
        t.scale = o._scale.ctypes.data_as(_lib.c_u8p)
        t.scale_rows, t.scale_cols = o._scale.shape
        t.amax = float(o._amax[0]) if o._amax is not None else 0.0
        t.rht = o.rht
        if o._row_amax is not None:
            t.row_amax = o._row_amax.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
        return t

    def _c(self):
        """An nvfp4_quantized describing these buffers (borrowed: C frees nothing)."""
        q = _lib.Quantized()
        q.recipe = self._recipe
        q.opts = self._opts
        q.row, q.col = self._qt(self.row), self._qt(self.col)
        q.has_row, q.has_col = self.row is not None, self.col is not None
        q.borrowed = True  # nvfp4_quantized_free would still free row_amax: never call it on this struct
        return q

    def dequantize(self, columnwise=False):
        o = self.col if columnwise else self.row
        if o is None:
            raise Error("this quantization has no %s output" % ("columnwise" if columnwise else "rowwise"))
        out = np.empty((o.rows, o.cols), dtype=np.float32)
        err = _lib.CError()
        q = self._c()
        _lib.check(lib.nvfp4_dequantize(ctypes.byref(q), bool(columnwise), out.ctypes.data, ctypes.byref(err)), err)
        return self._wrap(out)

    def components(self):
        """Every bundle component but x and dequant: {name: array}."""
        d = {}
        if self.row is not None:
            d.update(self.row.components())
        if self.col is not None:
            d.update(self.col.components())
        return d

    def __repr__(self):
        o = self.options
        return "<nvfp4kit.Quantized %d x %d recipe %s %s %s%s%s>" % (
            self.rows, self.cols, o["recipe"], o["block"], o["rounding"], " rowwise" if o["rowwise"] else "",
            " columnwise" + (" rht" if o["rht"] else "") if o["columnwise"] else "")


def _same_bytes(ptr, n, arr):
    return n == arr.nbytes and (n == 0 or np.array_equal(np.ctypeslib.as_array(ptr, shape=(n,)),
                                                         arr.reshape(-1).view(np.uint8)))


def _input_gives_codes(q, arr, dt):
    """True when quantizing arr (q's shape, dtype dt) with q's options gives every byte q holds: codes,
    scales, amax (one per row for a row-scaled recipe). A quantization shares its input with the caller
    (zero copy), who may change it afterwards; a bundle that paired the new input with the old codes
    would be a wrong golden, so save_bundle and verify check it first (the cost of one quantize)."""
    opts = _lib.QuantOpts.from_buffer_copy(q._opts)
    opts.rowwise, opts.columnwise = q.row is not None, q.col is not None
    out = _lib.Quantized()
    err = _lib.CError()
    if lib.nvfp4_quantize(arr.ctypes.data, dt, q.rows, q.cols, ctypes.byref(opts), ctypes.byref(out),
                          ctypes.byref(err)) != 0:
        return False
    try:
        for o, qt in ((q.row, out.row), (q.col, out.col)):
            if o is None:
                continue
            if not (_same_bytes(qt.data, qt.data_bytes, o._data) and
                    _same_bytes(qt.scale, qt.scale_rows * qt.scale_cols, o._scale)):
                return False
            if o._amax is not None and np.float32(qt.amax).tobytes() != o._amax.tobytes():
                return False
            if o._row_amax is not None and not (qt.row_amax and _same_bytes(
                    ctypes.cast(qt.row_amax, _lib.c_u8p), qt.prows * 4, o._row_amax)):
                return False
        return True
    finally:
        lib.nvfp4_quantized_free(ctypes.byref(out))


def _bundle_input(q, x, what):
    """(array, dtype) of the x a bundle of q holds: x when given, else the input q was quantized from;
    an Error unless it reproduces q's bytes (an input changed after quantize, or a different x)."""
    if x is None:
        if q._x is None:
            raise Error("%s: this Quantized has no input (load_bundle of a bundle without x?): pass x" % what)
        arr, dt = q._x, q._x_dtype
        if not q._x_checked and not _input_gives_codes(q, arr, dt):
            raise Error("%s: the input no longer gives this quantization's codes: it was changed after quantize "
                        "(nvfp4kit reads it in place); quantize it again, or pass the original as x" % what)
        return arr, dt
    inp = _Input(x)
    if (inp.rows, inp.cols) != (q.rows, q.cols):
        raise Error("%s: x is %d x %d, the quantization %d x %d" % (what, inp.rows, inp.cols, q.rows, q.cols))
    if not _input_gives_codes(q, inp.array, inp.dtype):
        raise Error("%s: x does not give this quantization's codes (not the input it was quantized from)" % what)
    return inp.array, inp.dtype


def _data_shape(lay, e4m3):
    return (lay.prows, lay.pcols if e4m3 else lay.pcols // 2)


def quantize(x, recipe="te", block=None, rounding="rn", seed=0, offset=0, rowwise=True, columnwise=False,
             rht=False, rht_signs="te", pad=False, rht_fp32=False, global_scale_inverted=False):
    """Quantizes a 2-D float32 / bfloat16 array or CPU torch tensor with a
    named recipe (the bytes of `nvfp4 quantize`); returns a Quantized.
    block: "1x16", "16x16" or "1x32"; None (or "default") takes the
    recipe's own, as the CLI does: 1x16 for the NVFP4 recipes, 1x32 for MX.
    global_scale_inverted: FlashInfer's is_global_scale_inversed, the kernel
    handed fl(1/S_enc) (`--global-scale-inverted`, docs/semantics.md)."""
    inp = _Input(x)
    o, rb = _opts(recipe, block, rounding, seed, offset, rowwise, columnwise, rht, rht_signs, pad, rht_fp32,
                  global_scale_inverted)
    plan = _lib.QuantPlan()
    err = _lib.CError()
    _lib.check(lib.nvfp4_quant_plan_init(ctypes.byref(plan), ctypes.byref(o), inp.dtype, inp.rows, inp.cols,
                                         ctypes.byref(err)), err)
    e4m3 = lib.nvfp4_recipe_get_info(plan.recipe).contents.elem == _lib.ELEM_E4M3
    bufs = _lib.QuantBuffers()
    arrays = {}
    try:
        for name, has, lay in (("row", plan.has_row, plan.row), ("col", plan.has_col, plan.col)):
            if has:
                d = np.empty(_data_shape(lay, e4m3), dtype=np.uint8)
                s = np.empty((lay.scale_rows, lay.scale_cols), dtype=np.uint8)
                setattr(bufs, name + "_data", d.ctypes.data)
                setattr(bufs, name + "_scale", s.ctypes.data)
                arrays[name] = (d, s, lay)
    except (MemoryError, ValueError):
        raise Error("%d x %d: the outputs do not fit in memory" % (inp.rows, inp.cols)) from None
    out = _lib.Quantized()
    _lib.check(lib.nvfp4_quantize_into(ctypes.byref(plan), ctypes.c_void_p(inp.ptr), ctypes.byref(bufs),
                                       ctypes.byref(out), ctypes.byref(err)), err)
    q = Quantized(plan.recipe, _lib.QuantOpts.from_buffer_copy(plan.opts), rb, x if inp.is_torch else inp.keep, inp.array, inp.dtype,
                  inp.rows, inp.cols, inp.is_torch, inp.torch_device)
    global_amax = lib.nvfp4_recipe_get_info(plan.recipe).contents.has_global_amax
    try:
        for name, qt in (("row", out.row), ("col", out.col)):
            if name in arrays:
                d, s, lay = arrays[name]
                amax = np.array([qt.amax], dtype=np.float32) if global_amax else None
                setattr(q, name, Orientation(q, name == "col", d, s, amax, qt.rows, qt.cols, qt.prows, qt.pcols,
                                             bool(qt.rht), _row_amax_copy(qt)))
    finally:
        lib.nvfp4_quantized_free(ctypes.byref(out))  # borrowed: frees only what the library allocated
    return q


def _row_amax_copy(qt):
    if not qt.row_amax:
        return None
    return np.ctypeslib.as_array(qt.row_amax, shape=(qt.prows,)).copy()


def dequantize(q, columnwise=False):
    """q.dequantize(columnwise): fp32 values of the logical shape."""
    if not isinstance(q, Quantized):
        raise Error("dequantize: expected a nvfp4kit.Quantized, got %s" % type(q).__name__)
    return q.dequantize(columnwise)


# ---- bundles --------------------------------------------------------------------------------------------------

def _path(p, what):
    if not isinstance(p, (str, os.PathLike)):
        raise Error("%s: expected a path, got %s" % (what, type(p).__name__))
    b = os.fsencode(p)
    if b"\0" in b:  # C would stop at the NUL and open a shorter path
        raise Error("%s: the path %r holds a NUL character" % (what, os.fspath(p)))
    return b


class _TSet:
    """An nvfp4_tensor_set owned by C, freed on exit."""

    def __init__(self):
        self.s = _lib.TensorSet()
        lib.nvfp4_tset_init(ctypes.byref(self.s))

    def __enter__(self):
        return self

    def __exit__(self, *a):
        lib.nvfp4_tset_free(ctypes.byref(self.s))

    def ref(self):
        return ctypes.byref(self.s)

    def add(self, name, tdtype, arr):
        arr = np.ascontiguousarray(arr)
        shape = (_lib.c_size * max(arr.ndim, 1))(*arr.shape) if arr.ndim else (_lib.c_size * 1)(1)
        err = _lib.CError()
        _lib.check(lib.nvfp4_tset_add(self.ref(), name.encode(), tdtype, max(arr.ndim, 1), shape,
                                      arr.ctypes.data, None, ctypes.byref(err)), err)

    def write(self, path, fmt=None):
        err = _lib.CError()
        p = _path(path, "write")
        f = lib.nvfp4_file_format_guess(p) if fmt is None else fmt
        _lib.check(lib.nvfp4_tset_write(p, self.ref(), f, ctypes.byref(err)), err)

    def tensors(self):
        out = {}
        for i in range(self.s.count):
            t = self.s.tensors[i]
            shape = tuple(t.shape[k] for k in range(t.ndim))
            raw = np.ctypeslib.as_array(t.data, shape=(t.nbytes,)).copy() if t.nbytes else np.empty(0, np.uint8)
            out[t.name.decode()] = (_lib.T_NAMES[t.dtype], shape, raw)
        return out


def save_bundle(q, path, x=None):
    """Writes q as a golden bundle (the bytes `nvfp4 quantize` writes for the
    same input and options): *.safetensors, or a folder of .npy files plus
    meta.json. x: the input (default: the one q was quantized from). The
    input must still give q's codes (it is read in place by quantize, and
    checked here by quantizing it again): an Error otherwise."""
    if not isinstance(q, Quantized):
        raise Error("save_bundle: expected a nvfp4kit.Quantized, got %s" % type(q).__name__)
    arr, dt = _bundle_input(q, x, "save_bundle")
    cq = q._c()
    err = _lib.CError()
    with _TSet() as s:
        _lib.check(lib.nvfp4_bundle_build(ctypes.byref(cq), arr.ctypes.data, dt, q.rows, q.cols, s.ref(),
                                          ctypes.byref(err)), err)
        s.write(path)


def load_bundle(path):
    """Reads and validates a golden bundle (any format the CLI reads) into a
    Quantized (numpy arrays; x kept when present)."""
    p = _path(path, "load_bundle")
    err = _lib.CError()
    with _TSet() as s:
        _lib.check(lib.nvfp4_bundle_load(p, s.ref(), ctypes.byref(err)), err)
        cq = _lib.Quantized()
        _lib.check(lib.nvfp4_bundle_to_quantized(s.ref(), p, ctypes.byref(cq), ctypes.byref(err)), err)
        try:
            tens = s.tensors()
            x = arr = None
            dt = _lib.DTYPE_F32
            if "x" in tens:
                tname, shape, raw = tens["x"]
                if tname == "F32":
                    arr = x = raw.view("<f4").reshape(shape)
                elif tname == "BF16":
                    arr, dt = raw.view("<u2").reshape(shape), _lib.DTYPE_BF16
                    bf = _bf16_dtype()
                    x = arr.view(bf) if bf is not None else arr
            rows = int(lib.nvfp4_tset_meta_get(s.ref(), b"rows") or 0)
            cols = int(lib.nvfp4_tset_meta_get(s.ref(), b"cols") or 0)
            if arr is not None:  # the file's bytes, private: read-only, so they stay those of the codes
                arr.flags.writeable = False
                x.flags.writeable = False
            q = Quantized(cq.recipe, _lib.QuantOpts.from_buffer_copy(cq.opts), None, x, arr, dt, rows, cols, False, None)
            q._x_checked = arr is not None
            # the options' recipe string points into the tensor set: use the recipe's own name
            q._recipe_bytes = q.recipe_info["name"].encode()
            q._opts.recipe = q._recipe_bytes
            e4m3 = q.recipe_info["elements"] == "e4m3"
            for name, has, qt in (("row", cq.has_row, cq.row), ("col", cq.has_col, cq.col)):
                if not has:
                    continue
                d = np.ctypeslib.as_array(qt.data, shape=(qt.data_bytes,)).copy()
                d = d.reshape((qt.prows, qt.pcols if e4m3 else qt.pcols // 2))
                sc = np.ctypeslib.as_array(qt.scale, shape=(qt.scale_rows * qt.scale_cols,)).copy()
                sc = sc.reshape((qt.scale_rows, qt.scale_cols))
                amax = np.array([qt.amax], dtype=np.float32) if q.recipe_info["global_amax"] else None
                setattr(q, name, Orientation(q, name == "col", d, sc, amax, qt.rows, qt.cols, qt.prows, qt.pcols,
                                             bool(qt.rht), _row_amax_copy(qt)))
        finally:
            lib.nvfp4_quantized_free(ctypes.byref(cq))
    return q
