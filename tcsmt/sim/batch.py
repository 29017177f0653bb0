"""Batch simulation: many dot products, and whole matrix products, at once.

The batch simulator is the datapath itself (``tcsmt.datapath.dot``) with
the NumPy interpretation (``tcsmt.interp.arrays``): every word is an array of
samples. Nothing here knows how a tensor core computes; it lays bits out as
arrays, cuts the work into tiles and reads the results back. Two engines
run the same datapath: "replay" (the default) runs the program recorded
from ``datapath.dot`` once per model and K (tcsmt.interp.program), "direct" calls
``datapath.dot`` with NumPy words for every tile; tests compare them.

``dot_batch`` takes rows of bit patterns (the form of recorded data).
``matmul`` takes NumPy arrays of floats, D = C + A @ B, M x K times K x N.
For a matrix product the K columns of A are words of shape [M, 1] and the
K rows of B words of shape [1, N]: unpacking (fields, flags) is done on
M + N values per k, once, and only the products and what follows broadcast
to a tile of D. The datapath chains blocks along K as the model says.

Memory: the replayed program keeps about one block of a tile alive (values
are dropped after their last use), so a tile of ``tile_elements`` outputs
needs about ``max_memory`` bytes at most, whatever K is; the peak of a
1024 x 1024 x 1024 GEMM is near 115 MiB (tests/test_batch.py measures it).
"""

from __future__ import annotations

import numpy as np

from tcsmt import datapath
from tcsmt.errors import UserError
from tcsmt.interp.arrays import MAX_BITS, NpWord, NumpyInterp
from tcsmt.interp.program import record
from tcsmt.model.params import ModelParams
from tcsmt.sim.npio import from_bits, model_for_arrays, to_bits

DEFAULT_MEMORY = 256 << 20
"""Bytes of working arrays one tile may use (the peak stays below this)."""

TILE_MAX = 1 << 16
"""Most output elements per tile: past this, tiles stop getting faster (the
per-instruction Python cost is paid off) and their arrays outgrow the caches."""


def bytes_per_sample(p: ModelParams, k: int, engine: str = "replay") -> int:
    """A generous estimate of the bytes one output element needs at the
    peak. The recorded program keeps about one block alive (each term's
    words and flags, its aligned form, temporaries); the direct engine
    keeps every product of the dot product alive as well."""
    block = min(k, p.block_size) + 1
    held = k * 24 if engine == "direct" else 0
    return held + block * 64 + 1024


def tile_elements(p: ModelParams, k: int, max_memory: int = DEFAULT_MEMORY,
                  engine: str = "replay") -> int:
    return max(1, min(TILE_MAX, max_memory // bytes_per_sample(p, k, engine)))


def check_supported(p: ModelParams, k: int = 1) -> None:
    """Raise WidthError (a UserError naming the model) if the model needs
    words wider than 64 bits (it records the datapath for up to one block
    and a chained one: widths do not grow with more blocks)."""
    prog = record(p, min(k, p.block_size + 1))
    if prog.max_width > MAX_BITS:
        NumpyInterp(p.name).const(0, prog.max_width)      # raises WidthError


def supported(p: ModelParams) -> bool:
    """Whether the NumPy interpreter can run this model (every word <= 64 bits)."""
    try:
        check_supported(p, p.block_size + 1)
    except UserError:
        return False
    return True


# ---------------------------------------------------------------------------
# Rows of bit patterns
# ---------------------------------------------------------------------------

def _check_bits(name: str, x: np.ndarray, bits: int, fmt_name: str) -> None:
    if x.size and int(x.max()) >> bits:
        raise UserError(f"{name} holds {int(x.max()):#x}, "
                        f"not a {fmt_name} bit pattern ({bits} bits)")


def run_dot(I, p: ModelParams, a: list, b: list, c, engine: str = "replay"):
    """datapath.dot(I, p, a, b, c): run directly ("direct"), or as the
    program recorded from it, replayed on I ("replay", the same primitive
    calls with the datapath's Python work done once; see tcsmt.interp.program)."""
    if engine == "direct":
        return datapath.dot(I, p, a, b, c)
    if engine != "replay":
        raise ValueError(f"unknown engine {engine!r}")
    inputs = {f"a{i}": x for i, x in enumerate(a)}
    inputs.update({f"b{i}": y for i, y in enumerate(b)})
    inputs["c"] = c
    return record(p, len(a)).run(I, inputs)


def dot_batch(p: ModelParams, a_bits, b_bits, c_bits, max_memory: int = DEFAULT_MEMORY,
              engine: str = "replay") -> np.ndarray:
    """d = c + sum_k a[n, k] * b[n, k] for every row n, as out_format bits.

    a_bits, b_bits: [N, K] bit patterns in p.in_format (b: p.fb); c_bits: [N] in
    p.c_format (any integer dtype). Returns [N] uint64 bits in p.out_format,
    the same bits the scalar interpreter gives row by row."""
    a = np.asarray(a_bits).astype(np.uint64, copy=False)
    b = np.asarray(b_bits).astype(np.uint64, copy=False)
    c = np.asarray(c_bits).astype(np.uint64, copy=False)
    if a.ndim != 2 or a.shape != b.shape or c.shape != a.shape[:1]:
        raise UserError(f"a and b must be [N, K] and c [N]; "
                        f"got a {a.shape}, b {b.shape}, c {c.shape}")
    if a.shape[1] == 0:
        raise UserError("a and b need at least one column (K >= 1)")
    _check_bits("a", a, p.fin.bits, p.fin.name)
    _check_bits("b", b, p.fb.bits, p.fb.name)
    _check_bits("c", c, p.fc.bits, p.fc.name)
    n, k = a.shape
    check_supported(p, k)
    out = np.empty(n, dtype=np.uint64)
    at, bt = np.ascontiguousarray(a.T), np.ascontiguousarray(b.T)
    step = tile_elements(p, k, max_memory, engine)
    I = NumpyInterp(p.name)
    for r0 in range(0, n, step):
        r1 = min(n, r0 + step)
        aw = [I.array(at[i, r0:r1], p.fin.bits) for i in range(k)]
        bw = [I.array(bt[i, r0:r1], p.fb.bits) for i in range(k)]
        d = run_dot(I, p, aw, bw, I.array(c[r0:r1], p.fc.bits), engine)
        out[r0:r1] = I.value(d, (r1 - r0,))
    return out


# ---------------------------------------------------------------------------
# Matrix products
# ---------------------------------------------------------------------------

def matmul(A, B, C, arch, formats: str | None = None, overrides: list[str] | None = None,
           max_memory: int = DEFAULT_MEMORY, engine: str = "replay") -> np.ndarray:
    """D = C + A @ B exactly as the modelled matrix unit computes it.

    A is M x K, B is K x N, C is M x N, as NumPy arrays whose dtypes are the
    model's formats: np.float16, ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn,
    ml_dtypes.float8_e5m2 for a and b; np.float32 for tf32 inputs, read as
    the hardware reads them: the top 19 bits, the low 13 bits of each
    binary32 dropped (truncated, not rounded). C and D are np.float32 or
    np.float16 (the model's c and out formats).

    ``arch`` is an architecture (volta, turing, ampere, ada, hopper,
    blackwell, cdna3), a model name (hopper-e4m3-fp32), a model file or a
    ModelParams. With an architecture and no ``formats`` ("IN:OUT", as
    "bf16:fp32"), the model is the architecture's one whose input and c
    formats match the dtypes of A and C. ``overrides`` are "key=value"
    strings as for ``--set``. Each element of D is a dot product of length
    K, run block after block along K as the architecture chains them.
    """
    A, B, C = (np.asarray(x) for x in (A, B, C))
    p = model_for_arrays(arch, formats, overrides, A, C, B)
    _check_shapes(A, B, C)
    check_supported(p, A.shape[1])
    at = np.ascontiguousarray(to_bits(A, p.fin, "A").T)        # [K, M]
    bt = np.ascontiguousarray(to_bits(B, p.fb, "B"))          # [K, N]
    ct = to_bits(C, p.fc, "C")
    m, k = A.shape
    n = B.shape[1]
    out = np.empty((m, n), dtype=np.uint64)
    tile = _hoisted_tiles(p, at, bt, engine)
    for (m0, m1), (n0, n1) in _tiles(m, n, tile_elements(p, k, max_memory, engine)):
        rows, cols = slice(m0, m1), slice(n0, n1)
        out[rows, cols] = tile(rows, cols, ct[rows, cols])
    return from_bits(out, p.fout)


def _check_shapes(A: np.ndarray, B: np.ndarray, C: np.ndarray) -> None:
    if A.ndim != 2 or B.ndim != 2 or C.ndim != 2:
        raise UserError(f"A, B and C must be 2-D; got {A.ndim}-D, {B.ndim}-D and {C.ndim}-D")
    (m, k), (k2, n) = A.shape, B.shape
    if k != k2:
        raise UserError(f"A is {m}x{k} and B is {k2}x{n}: A's columns must equal B's rows")
    if C.shape != (m, n):
        raise UserError(f"C is {C.shape[0]}x{C.shape[1]}, "
                        f"expected {m}x{n} (A's rows x B's columns)")
    if k == 0:
        raise UserError("K = 0: A and B need at least one column and row")


def _tiles(m: int, n: int, elems: int):
    """(rows, columns) ranges of tiles of at most ``elems`` elements."""
    tn = min(n, elems)
    tm = max(1, min(m, elems // tn))
    for m0 in range(0, m, tm):
        for n0 in range(0, n, tn):
            yield (m0, min(m, m0 + tm)), (n0, min(n, n0 + tn))


def _hoisted_tiles(p: ModelParams, at: np.ndarray, bt: np.ndarray, engine: str):
    """A function (rows, cols, c bits) -> d bits of that tile. With the
    recorded program, the work on A alone and on B alone is done once here
    (see tcsmt.interp.program); the direct engine runs the whole datapath per tile."""
    I = NumpyInterp(p.name)
    k = at.shape[0]
    aw = [I.array(at[i][:, None], p.fin.bits) for i in range(k)]
    bw = [I.array(bt[i][None, :], p.fb.bits) for i in range(k)]
    if engine == "direct":
        def tile(rows, cols, c):
            d = datapath.dot(I, p, [_rows(x, rows) for x in aw], [_cols(y, cols) for y in bw],
                             I.array(c, p.fc.bits))
            return I.value(d, c.shape)
        return tile
    if engine != "replay":
        raise ValueError(f"unknown engine {engine!r}")
    run = record(p, k).run_hoisted(I, {f"a{i}": x for i, x in enumerate(aw)},
                                   {f"b{i}": y for i, y in enumerate(bw)})

    def tile(rows, cols, c):
        return I.value(run(rows, cols, I.array(c, p.fc.bits)), c.shape)
    return tile


def _rows(x, rows):
    return NpWord(x.v[rows], x.w)


def _cols(x, cols):
    return NpWord(x.v[:, cols], x.w)


__all__ = ["dot_batch", "matmul", "check_supported", "supported", "MAX_BITS"]
