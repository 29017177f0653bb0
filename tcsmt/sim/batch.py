"""Batch simulation: many dot products, and whole matrix products, at once.

The batch simulator is the datapath itself (``tcsmt.datapath.dot``) with
the NumPy interpretation (``tcsmt.interp.arrays``): every word is an array of
samples. Nothing here knows how a tensor core computes; it lays bits out as
arrays, cuts the work into tiles and reads the results back. Two engines
run the same datapath: "replay" (the default) runs the chain of blocks
with one block's step recorded once per model and block shape
(tcsmt.sim.replay), "direct" calls ``datapath.dot`` with NumPy words for
every tile; tests compare them.

``dot_batch`` takes rows of bit patterns (the form of recorded data).
``matmul`` takes NumPy arrays of floats, D = C + A @ B, M x K times K x N.
For a matrix product the K columns of A are words of shape [M, 1] and the
K rows of B words of shape [1, N]: unpacking (fields, flags) is done on
M + N values per k, once, and only the products and what follows broadcast
to a tile of D. The datapath chains blocks along K as the model says.

Memory: the replayed chain keeps about one block of a tile alive (values
are dropped after their last use) and the hoisted unpacking of a stretch of
blocks (tcsmt.sim.replay.HOIST_BYTES), so a tile of ``tile_elements``
outputs needs about ``max_memory`` bytes at most, whatever K is; the peak
of a 1024 x 1024 x 1024 GEMM is near 115 MiB (tests/test_batch.py
measures it).

Speed: every instruction of a block's step is one NumPy call over a tile,
so a call costs a few microseconds however small the tile. With tiles of
10^4 elements or more the NumPy engine runs about 10^8 products per
second; a D of n elements in all (a 10 x 10 D: n = 100) runs at about
n x 10^4 products per second (measured in benchmarks/bench_growth.py).
"""

from __future__ import annotations

import numpy as np

from tcsmt import datapath
from tcsmt.budget import require
from tcsmt.errors import ShapeError, UserError
from tcsmt.interp.arrays import MAX_BITS, NpWord, NumpyInterp
from tcsmt.interp.chain import end_program, plan, start_program, step_program
from tcsmt.model.params import ModelParams
from tcsmt.sim.backends import BACKENDS, choose, dots_bits, gemm_bits
from tcsmt.sim.memory import gemm_bytes, rows_bytes
from tcsmt.sim.npio import from_bits, to_bits
from tcsmt.sim.replay import dot_rows, gemm_tile

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
    words wider than 64 bits (it records the chain's programs for up to one
    full block and a chained one: widths do not grow with more blocks)."""
    pl = plan(p, min(k, p.block_size + 1))
    progs = [start_program(p), end_program(p)] + [step_program(p, r.key) for r in pl.runs]
    width = max(prog.max_width for prog in progs)
    if width > MAX_BITS:
        NumpyInterp(p.name).const(0, width)      # raises WidthError


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


def run_dot(I, p: ModelParams, a: list, b: list, c, sa=None, sb=None, mask=None):
    """datapath.dot(I, p, a, b, c, sa=sa, sb=sb, mask=mask), the datapath
    run directly with the words of every product (the "direct" engine)."""
    return datapath.dot(I, p, a, b, c, sa=sa, sb=sb, mask=mask)


def _as_rows(name: str, x, n: int, k: int) -> np.ndarray:
    x = np.asarray(x).astype(np.uint64, copy=False)
    if x.shape != (n, k):
        raise UserError(f"{name} must be [{n}, {k}]; got {x.shape}")
    return x


def dot_batch(p: ModelParams, a_bits, b_bits, c_bits, max_memory: int = DEFAULT_MEMORY,
              engine: str = "replay", sa_bits=None, sb_bits=None,
              backend: str = "numpy", mask_bits=None) -> np.ndarray:
    """d = c + sum_k a[n, k] * b[n, k] for every row n, as out_format bits.

    a_bits, b_bits: [N, K] bit patterns in p.in_format and p.b_format;
    c_bits: [N] in p.c_format (any integer dtype); for a block-scaled model
    sa_bits, sb_bits: [N, S] bit patterns of the scales in p.scale_format,
    S = ceil(K / scale_block); for a sparse model mask_bits: [N, K] of 0
    and 1 (1: the metadata selects the product). Returns [N] uint64 bits in
    p.out_format, the same bits the scalar interpreter gives row by row.
    ``backend`` "cpu" runs the compiled kernel (tcsmt.sim.backends), "numpy"
    (the default: no compilation, and the one sparse models run on) the
    NumPy interpretation with ``engine``."""
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
    require(rows_bytes(p, n, k, max_memory), f"{n} dot products of length {k} under {p.name}")
    ns = p.scale_count(k)
    if (sa_bits is None) != (ns == 0) or (sb_bits is None) != (ns == 0):
        raise UserError(f"{p.name}: " + (f"give the scales of a and b as [N, {ns}]" if ns
                                         else "this model has no block scales"))
    sat = np.ascontiguousarray(_as_rows("the scales of a", sa_bits, n, ns).T) if ns else None
    sbt = np.ascontiguousarray(_as_rows("the scales of b", sb_bits, n, ns).T) if ns else None
    sf = p.scaling()[0] if ns else None
    for name, x in (("the scales of a", sat), ("the scales of b", sbt)):
        if x is not None and sf is not None:
            _check_bits(name, x, sf.bits, sf.name)
    mt = _mask_rows(p, mask_bits, n, k)
    check_supported(p, k)
    chosen = choose(p, k, n * k, backend, "rows")
    if mt is None and chosen != "numpy":
        return dots_bits(p, chosen, a, b, c, sa=sat, sb=sbt)
    if engine not in ("replay", "direct"):
        raise ValueError(f"unknown engine {engine!r}")
    if mt is not None:              # a sparse selection spans the whole K: no block's step alone
        engine = "direct"
    out = np.empty(n, dtype=np.uint64)
    at, bt = np.ascontiguousarray(a.T), np.ascontiguousarray(b.T)
    step = tile_elements(p, k, max_memory, engine)
    I = NumpyInterp(p.name)

    def words(x, r0, r1, bits):
        return None if x is None else [I.array(x[i, r0:r1], bits) for i in range(x.shape[0])]
    for r0 in range(0, n, step):
        r1 = min(n, r0 + step)
        part = (slice(None), slice(r0, r1))
        if engine == "replay":
            out[r0:r1] = dot_rows(p, at[part], bt[part], c[r0:r1], None if sat is None else sat[part],
                                  None if sbt is None else sbt[part])
            continue
        d = run_dot(I, p, words(at, r0, r1, p.fin.bits), words(bt, r0, r1, p.fb.bits),
                    I.array(c[r0:r1], p.fc.bits),
                    words(sat, r0, r1, sf and sf.bits), words(sbt, r0, r1, sf and sf.bits),
                    words(mt, r0, r1, 1))
        out[r0:r1] = I.value(d, (r1 - r0,))
    return out


def _mask_rows(p: ModelParams, mask_bits, n: int, k: int) -> np.ndarray | None:
    """A sparse model's mask [N, K] transposed to [K, N] (None for a dense model)."""
    if (mask_bits is None) != (p.sparsity == "dense"):
        raise UserError(f"{p.name}: " + (f"give the mask as [{n}, {k}] bits ({p.sparsity} sparse)"
                                         if mask_bits is None else "this model is dense: no mask"))
    if mask_bits is None:
        return None
    m = _as_rows("the mask", mask_bits, n, k)
    _check_bits("the mask", m, 1, "mask")
    return np.ascontiguousarray(m.T)


# ---------------------------------------------------------------------------
# Matrix products
# ---------------------------------------------------------------------------

def matmul(A: np.ndarray, B: np.ndarray, C: np.ndarray, p: ModelParams, *, scale_a=None,
           scale_b=None, backend: str | None = None, threads: int | None = None,
           max_memory: int | None = None, engine: str = "replay", progress=None) -> np.ndarray:
    """D = C + A @ B exactly as the model ``p`` computes it (the model is
    chosen by the caller: ``tcsmt.matmul`` chooses it from a name and the
    operands' dtypes, tcsmt.model.choose).

    A is M x K, B is K x N, C is M x N, as NumPy arrays whose dtypes are the
    model's formats: np.float16, ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn,
    ml_dtypes.float8_e5m2, ml_dtypes.float6_e2m3fn, float6_e3m2fn,
    float4_e2m1fn for a and b (b in the model's b_format); np.float32 for
    tf32 inputs, read as the hardware reads them: the top 19 bits, the low
    13 bits of each binary32 dropped (truncated, not rounded). C and D are
    np.float32 or np.float16 (the model's c and out formats). Each element
    of D is a dot product of length K, run block after block along K as the
    model chains them.

    A block-scaled model (MX, NVFP4) takes ``scale_a``, M x S, and
    ``scale_b``, S x N, with S = ceil(K / scale_block): the scale of row m
    of A for products s * scale_block .. (s + 1) * scale_block - 1, and of
    column n of B for the same products; their dtype is the scale format's
    (ml_dtypes.float8_e8m0fnu for ue8m0, ml_dtypes.float8_e4m3fn for ue4m3,
    whose sign bit is ignored).

    ``backend`` is "numpy", "cpu" (the compiled kernel on ``threads`` cores,
    all by default) or "cuda"; None takes the fastest available
    (tcsmt.sim.backends). Every backend gives the same bits.
    ``progress(name, done, total)`` is called as tiles of D are done.
    """
    if not isinstance(p, ModelParams):
        raise UserError(f"tcsmt.sim.batch.matmul takes a chosen model (a ModelParams), not "
                        f"{type(p).__name__}: tcsmt.matmul chooses one by name")
    max_memory = max_memory or DEFAULT_MEMORY
    A, B, C = (np.asarray(x) for x in (A, B, C))
    if p.sparsity != "dense":
        raise UserError(f"{p.name} is sparse ({p.sparsity}): matrix products take dense A; run "
                        "its dot products with their masks (dot_batch mask_bits=, tcsmt simulate --mask)")
    check_shapes(A, B, C)
    check_memory(p, A.shape[0], B.shape[1], A.shape[1], backend, max_memory, threads)
    check_supported(p, A.shape[1])
    at = np.ascontiguousarray(to_bits(A, p.fin, "A").T)        # [K, M]
    bt = np.ascontiguousarray(to_bits(B, p.fb, "B"))        # [K, N]
    ct = to_bits(C, p.fc, "C")
    m, k = A.shape
    sa, sb = scale_bits(p, k, m, B.shape[1], scale_a, scale_b)
    out = matmul_bits(p, at, bt, ct, max_memory, engine, backend, threads, sa, sb, progress)
    return from_bits(out, p.fout)


def check_memory(p: ModelParams, m: int, n: int, k: int, backend: str | None = None,
                 max_memory: int | None = None, threads: int | None = None, extra: int = 0) -> None:
    """BudgetExceeded (one line, naming the estimate and what is available)
    when D = C + A @ B of these sizes would need more memory than there is
    (tcsmt.sim.memory.gemm_bytes, and ``extra`` bytes the caller adds).
    Without a backend, the least any backend needs is checked first (the
    choice itself records the program), then what the chosen one needs."""
    what = f"D = C + A @ B ({m}x{k} times {k}x{n}) under {p.name}"
    mem = max_memory or DEFAULT_MEMORY
    if backend is None:
        require(min(gemm_bytes(p, m, n, k, b, mem, threads) for b in BACKENDS) + extra, what)
        backend = choose(p, k, m * n * k, None)
    require(gemm_bytes(p, m, n, k, backend, mem, threads) + extra, what)


def matmul_bits(p: ModelParams, at: np.ndarray, bt: np.ndarray, ct: np.ndarray,
                max_memory: int = DEFAULT_MEMORY, engine: str = "replay", backend: str | None = None,
                threads: int | None = None, sa: np.ndarray | None = None,
                sb: np.ndarray | None = None, progress=None) -> np.ndarray:
    """D's bits [M, N] (uint64, out_format) from A's bits transposed at
    [K, M], B's bits bt [K, N], C's bits ct [M, N] and, for a block-scaled
    model, the scales' bits sa [S, M] and sb [S, N] (see matmul)."""
    k, m = at.shape
    n = bt.shape[1]
    check_supported(p, k)
    chosen = choose(p, k, m * n * k, backend)
    tell = progress or (lambda name, done, total: None)
    if chosen != "numpy":
        tell(chosen, 0, 1)
        out = gemm_bits(p, chosen, at, bt, ct, threads, sa, sb)
        tell(chosen, 1, 1)
        return out
    out = np.empty((m, n), dtype=np.uint64)
    tile = _hoisted_tiles(p, at, bt, engine, sa, sb)
    tiles = list(_tiles(m, n, tile_elements(p, k, max_memory, engine)))
    tell("", 0, len(tiles))
    for done, ((m0, m1), (n0, n1)) in enumerate(tiles, 1):
        rows, cols = slice(m0, m1), slice(n0, n1)
        out[rows, cols] = tile(rows, cols, ct[rows, cols])
        tell("", done, len(tiles))
    return out


def scale_bits(p: ModelParams, k: int, m: int, n: int, scale_a, scale_b):
    """The scales as bits, [S, M] for A and [S, N] for B (None, None
    without a scale format)."""
    s = p.scale_count(k)
    if not s:
        if scale_a is not None or scale_b is not None:
            raise UserError(f"{p.name} has no block scales: leave out scale_a and scale_b")
        return None, None
    fs, block = p.scaling()
    if scale_a is None or scale_b is None:
        raise UserError(f"{p.name} scales every {block} products along K: give scale_a "
                        f"({m}x{s}) and scale_b ({s}x{n}) in {fs.name}")
    SA, SB = np.asarray(scale_a), np.asarray(scale_b)
    for name, x, want in (("scale_a", SA, (m, s)), ("scale_b", SB, (s, n))):
        if x.shape != want:
            raise UserError(f"{name} is {'x'.join(map(str, x.shape))}, expected {want[0]}x{want[1]} "
                            f"(K = {k} in blocks of {block})")
    return (np.ascontiguousarray(to_bits(SA, fs, "scale_a").T),
            np.ascontiguousarray(to_bits(SB, fs, "scale_b")))


def check_shapes(A: np.ndarray, B: np.ndarray, C: np.ndarray) -> None:
    if A.ndim != 2 or B.ndim != 2 or C.ndim != 2:
        raise ShapeError(f"A, B and C must be 2-D; got {A.ndim}-D, {B.ndim}-D and {C.ndim}-D")
    (m, k), (k2, n) = A.shape, B.shape
    if k != k2:
        raise ShapeError(f"A is {m}x{k} and B is {k2}x{n}: A's columns must equal B's rows")
    if C.shape != (m, n):
        raise ShapeError(f"C is {C.shape[0]}x{C.shape[1]}, "
                        f"expected {m}x{n} (A's rows x B's columns)")
    if k == 0:
        raise ShapeError("K = 0: A and B need at least one column and row")


def _tiles(m: int, n: int, elems: int):
    """(rows, columns) ranges of tiles of at most ``elems`` elements."""
    tn = min(n, elems)
    tm = max(1, min(m, elems // tn))
    for m0 in range(0, m, tm):
        for n0 in range(0, n, tn):
            yield (m0, min(m, m0 + tm)), (n0, min(n, n0 + tn))


def _hoisted_tiles(p: ModelParams, at: np.ndarray, bt: np.ndarray, engine: str,
                   sa: np.ndarray | None = None, sb: np.ndarray | None = None):
    """A function (rows, cols, c bits) -> d bits of that tile: the chain
    replayed with the work on A alone and on B alone hoisted out of the
    tile (tcsmt.sim.replay), or the whole datapath per tile ("direct")."""
    if engine == "replay":
        return lambda rows, cols, c: gemm_tile(p, at, bt, c, sa, sb, rows, cols)
    if engine != "direct":
        raise ValueError(f"unknown engine {engine!r}")
    I = NumpyInterp(p.name)
    k = at.shape[0]
    aw = [I.array(at[i][:, None], p.fin.bits) for i in range(k)]
    bw = [I.array(bt[i][None, :], p.fb.bits) for i in range(k)]
    sw = 0 if sa is None else p.scaling()[0].bits
    saw = None if sa is None else [I.array(x[:, None], sw) for x in sa]
    sbw = None if sb is None else [I.array(y[None, :], sw) for y in sb]

    def tile(rows, cols, c):
        d = datapath.dot(I, p, [_rows(x, rows) for x in aw], [_cols(y, cols) for y in bw],
                         I.array(c, p.fc.bits),
                         sa=None if saw is None else [_rows(x, rows) for x in saw],
                         sb=None if sbw is None else [_cols(y, cols) for y in sbw])
        return I.value(d, c.shape)
    return tile


def _rows(x, rows):
    return NpWord(x.v[rows], x.w)


def _cols(x, cols):
    return NpWord(x.v[:, cols], x.w)


__all__ = ["dot_batch", "matmul", "matmul_bits", "check_memory", "check_supported", "supported", "MAX_BITS"]
