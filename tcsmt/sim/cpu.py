"""The compiled CPU backend: the chain of blocks (tcsmt.interp.chain) run by
the kernels of tcsmt.interp.kernel_cpu, in tasks that threads share.

A matrix product is cut into tiles of D (up to TILE rows x columns, the
columns in vectors of LANES) and tasks of a column of tiles; where that
gives the threads too few tasks, the tiles get fewer rows (down to one),
so a 10 x K x 10 product still runs on every core (two tiles of 5 x 10).
A task runs the chain block after block for its tiles: ``start`` fills
each tile's state with block 0's c; for each run of blocks that share a
step program, a stretch of blocks at a time, ``part_b`` unpacks B's words
of the stretch for the task's columns once, ``part_a`` A's for each tile,
and ``steps`` runs the blocks on the tile; ``end`` writes D. Rows of dot
products (recorded data) run ``steps_rows`` on vectors of rows.

Memory per task: the state of its tiles (7 words per element), the
stretch's hoisted words (HA, HB: bounded by HOIST_BYTES) and, beside A,
B, C and D, copies of them padded to whole vectors: nothing grows with K
but A and B themselves.
"""

from __future__ import annotations

import functools
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from tcsmt.interp.chain import end_program, plan, start_program, step_program
from tcsmt.interp.kernel_cpu import LANES, ROWS, STATE, ends_module, gemm_module, parts, rows_module
from tcsmt.model.params import ModelParams
from tcsmt.sim.llvm import Library, cache_dir, digest

TILE = (ROWS, 64)
"""Rows and columns of D per tile (the columns in vectors of LANES; rows
at most kernel_cpu.ROWS)."""

TASKS_PER_THREAD = 4
HOIST_BYTES = 96 << 10
"""Bytes of B's hoisted words per stretch of blocks (they stay in the L2
cache while every row of a tile reads them)."""

ROWS_PER_TASK = 256


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:           # not on Linux
        return os.cpu_count() or 1


# ---------------------------------------------------------------------------
# Modules
# ---------------------------------------------------------------------------

@functools.lru_cache(maxsize=32)
def module_text(kind: str, p: ModelParams, key=None) -> str:
    """The IR of one module: "ends", or a block shape's "gemm" or "rows".
    The module is named by what it is, not by the model: models of one
    arithmetic record the same programs, so they share one compiled object
    in the cache (its file is named by the text's digest). Kept: a call
    asks for it twice (whether it is on disk, then to load it)."""
    if kind == "ends":
        return str(ends_module(start_program(p), end_program(p), "ends"))
    make = gemm_module if kind == "gemm" else rows_module
    return str(make(step_program(p, key), f"{kind} {key.n}"))


@functools.lru_cache(maxsize=128)
def library(kind: str, p: ModelParams, key=None) -> Library:
    return Library(module_text(kind, p, key), kind)


def load(p: ModelParams, k: int, kind: str) -> None:
    """Compile (or load) every module of a call before its threads start."""
    for m, key in modules(p, k, kind):
        lib = library(m, p, key)
        for name in _FUNCTIONS[m]:
            lib.function(*name)


_FUNCTIONS = {"ends": [("start", 10), ("end", 10), ("start_t", 9), ("end_t", 9)],
              "gemm": [("task", 28)], "rows": [("steps_rows", 16)]}


def modules(p: ModelParams, k: int, kind: str) -> list:
    """(kind, key) of every module a call of dot products of length k needs."""
    return [("ends", None)] + [(kind, run.key) for run in plan(p, k).runs]


def compiled_on_disk(p: ModelParams, k: int, kind: str) -> bool:
    """Whether every module of this call is in the cache (nothing to compile)."""
    return all((cache_dir() / f"tcsmt_cpu_{digest(module_text(m, p, key))}.o").exists()
               for m, key in modules(p, k, kind))


# ---------------------------------------------------------------------------
# Matrix products
# ---------------------------------------------------------------------------

def _u64(x: np.ndarray) -> np.ndarray:
    """x as a C-contiguous uint64 array (the kernels read nothing past
    its end: the last vector of a row is a masked one)."""
    return np.ascontiguousarray(x, dtype=np.uint64)


def tables(pl):
    """(ORDER, SROWS, slots, block size, ident): the plan's tables for the
    kernels (ORDER a dummy where the products are in order)."""
    srows = pl.srows if pl.srows is not None else np.zeros((1, 1), dtype=np.int64)
    order = pl.order if pl.order is not None else np.zeros(1, dtype=np.int64)
    return (np.ascontiguousarray(order), np.ascontiguousarray(srows), srows.shape[1], pl.size,
            int(pl.order is None))


def tiles(m: int, n: int, threads: int, tile: tuple = TILE) -> tuple[int, int, int]:
    """(rows per tile, columns per tile, tiles per task) for an m x n D:
    where the tiles are too few for the threads, fewer rows (down to one),
    then fewer columns (down to one vector)."""
    tn = min(tile[1], _up(n, LANES))
    tm = min(tile[0], m)
    if _ceil(n, tn) * _ceil(m, tm) < threads:
        tm = max(1, _ceil(m, _ceil(threads, _ceil(n, tn))))
    if _ceil(n, tn) * _ceil(m, tm) < threads:
        tn = max(LANES, _up(_ceil(n, _ceil(threads, _ceil(m, tm))), LANES))
    ntm, ntn = _ceil(m, tm), _ceil(n, tn)
    per_column = min(ntm, max(1, _ceil(TASKS_PER_THREAD * threads, ntn)))
    return tm, tn, _ceil(ntm, per_column)


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _up(a: int, b: int) -> int:
    """a rounded up to a multiple of b."""
    return _ceil(a, b) * b


def task_list(m: int, n: int, threads: int, tile: tuple = TILE) -> tuple[int, int, list]:
    """(rows per tile, columns per tile, tasks): each task the first column
    of its tiles and the indices of its tiles along the rows."""
    tm, tn, group = tiles(m, n, threads, (min(tile[0], ROWS), tile[1]))
    ntm = -(-m // tm)
    return tm, tn, [(n0, list(range(i, min(i + group, ntm)))) for n0 in range(0, n, tn)
                    for i in range(0, ntm, group)]


def run_gemm(p: ModelParams, at: np.ndarray, bt: np.ndarray, ct: np.ndarray, threads: int | None = None,
             tile: tuple = TILE, sa: np.ndarray | None = None, sb: np.ndarray | None = None) -> np.ndarray:
    """D's bits [M, N] (uint64) from A's bits transposed at [K, M], B's bt
    [K, N], C's ct [M, N] and, for a block-scaled model, the scales' bits
    sa [S, M] and sb [S, N], on ``threads`` cores (all by default)."""
    k, m = at.shape
    n = bt.shape[1]
    threads = threads or cpu_count()
    pl = plan(p, k)
    tm, tn, tasks = task_list(m, n, threads, tile)
    A, B, C = _u64(at), _u64(bt), _u64(ct)
    D = np.empty((m, n), dtype=np.uint64)
    SA = _u64(sa if sa is not None else np.zeros((1, m), np.uint64))
    SB = _u64(sb if sb is not None else np.zeros((1, n), np.uint64))
    load(p, k, "gemm")
    job = _Gemm(p, pl, (A, B, C, D, SA, SB), (tm, tn))
    _run(job.task, tasks, threads)
    return D


def _run(fn, tasks: list, threads: int) -> None:
    if threads == 1 or len(tasks) == 1:
        for t in tasks:
            fn(*t)
        return
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for f in [pool.submit(fn, *t) for t in tasks]:
            f.result()


class _Gemm:
    """One matrix product's arrays and plan; ``task`` runs one task."""

    def __init__(self, p, pl, arrays, shape):
        self.p, self.pl, self.arrays, (self.tm, self.tn) = p, pl, arrays, shape
        self.tables = tables(pl)
        self.ends = library("ends", p)

    def task(self, n0: int, tile_rows: list) -> None:
        p, (A, B, C, D, SA, SB) = self.p, self.arrays
        TM, TN = self.tm, self.tn
        m, valid = D.shape[0], min(TN, D.shape[1] - n0)
        ng, nv, r = columns(valid, TM)
        tiles = [(i * TM, min(TM, m - i * TM)) for i in tile_rows]
        ST = np.zeros((len(tiles), TM * ng * LANES * len(STATE)), dtype=np.uint64)
        STT = np.zeros((len(tiles), max(1, r * -(-TM // LANES) * LANES * len(STATE))), dtype=np.uint64)
        ends = {name: self.ends.function(name, n) for name, n in _FUNCTIONS["ends"]}
        c, d = (C.ctypes.data, C.shape[1]), (D.ctypes.data, D.shape[1])
        for t, (m0, tm) in enumerate(tiles):
            ends["start"](*c, 0, 0, ST[t].ctypes.data, m0, tm, n0, ng, nv)
            if r:
                ends["start_t"](*c, 0, 0, STT[t].ctypes.data, m0, tm, n0 + nv * LANES, r)
        order, srows, *rest = self.tables
        tabs = (order.ctypes.data, srows.ctypes.data, *rest)
        TILES = np.array(tiles, dtype=np.int64)
        for run in self.pl.runs:
            pt = parts(step_program(p, run.key))
            per_block = max(1, len(pt.hb) * TN * pt.bits_b // 8)
            stretch = max(1, min(run.j1 - run.j0, HOIST_BYTES // per_block))
            HB = np.empty(stretch * max(1, len(pt.hb)) * TN, dtype=_dtype(pt.bits_b))
            HA = np.empty(stretch * max(1, len(pt.ha)) * ROWS, dtype=_dtype(pt.bits_a))
            library("gemm", p, run.key).function("task", 28)(
                A.ctypes.data, SA.ctypes.data, B.ctypes.data, SB.ctypes.data, A.shape[1], SA.shape[1],
                B.shape[1], SB.shape[1], *tabs, n0, ng, nv, r, TILES.ctypes.data, len(tiles), run.j0,
                run.j1, stretch, HA.ctypes.data, HB.ctypes.data, ST.ctypes.data, ST.shape[1],
                STT.ctypes.data, STT.shape[1])
        for t, (m0, tm) in enumerate(tiles):
            ends["end"](*c, *d, ST[t].ctypes.data, m0, tm, n0, ng, nv)
            if r:
                ends["end_t"](*c, *d, STT[t].ctypes.data, m0, tm, n0 + nv * LANES, r)


def columns(valid: int, rows: int) -> tuple[int, int, int]:
    """(vectors of B's hoisted words, vectors along the columns, columns
    along the rows) for a tile of ``valid`` columns and ``rows`` rows: the
    columns after the last whole vector go along the rows (steps_t) where
    that takes fewer vectors (10 columns and 10 rows: 8 in vectors along
    the columns, 2 in two vectors of rows each, 14 vectors of 8 lanes
    rather than 20)."""
    ng = -(-valid // LANES)
    r = valid % LANES
    if r and r * -(-rows // LANES) < rows:
        return ng, valid // LANES, r
    return ng, ng, 0


def _dtype(bits: int):
    return np.uint32 if bits == 32 else np.uint64


# ---------------------------------------------------------------------------
# Rows of dot products
# ---------------------------------------------------------------------------

def run_rows(p: ModelParams, a: np.ndarray, b: np.ndarray, c: np.ndarray, threads: int | None = None,
             sa: np.ndarray | None = None, sb: np.ndarray | None = None,
             rows: int = ROWS_PER_TASK) -> np.ndarray:
    """d[r] bits (uint64) for rows of bits a [R, K], b [R, K], c [R] and
    the scales' bits transposed sa [S, R], sb [S, R] of a block-scaled
    model."""
    r, k = a.shape
    threads = threads or cpu_count()
    pl = plan(p, k)
    rows = max(LANES, min(rows, -(-r // threads // LANES) * LANES))
    width = -(-r // rows) * rows
    AT, BT = _u64(a.T), _u64(b.T)
    C, D = _u64(c), np.empty(r, dtype=np.uint64)
    SA = _u64(sa if sa is not None else np.zeros((1, r), np.uint64))
    SB = _u64(sb if sb is not None else np.zeros((1, r), np.uint64))
    order, srows, *rest = tables(pl)
    load(p, k, "rows")
    ends = library("ends", p)
    tabs = (order.ctypes.data, srows.ctypes.data, *rest)

    def task(r0: int) -> None:
        ST = np.zeros(len(STATE) * rows, dtype=np.uint64)
        ng = rows // LANES
        ends.function("start", 10)(C.ctypes.data, r, 0, r, ST.ctypes.data, 0, 1, r0, ng, ng)
        for run in pl.runs:
            steps = library("rows", p, run.key).function("steps_rows", 16)
            steps(AT.ctypes.data, BT.ctypes.data, SA.ctypes.data, SB.ctypes.data, r, r,
                  *tabs, r0, ng, run.j0, run.j1 - run.j0, ST.ctypes.data)
        ends.function("end", 10)(C.ctypes.data, r, D.ctypes.data, r, ST.ctypes.data, 0, 1, r0, ng, ng)
    _run(task, [(r0,) for r0 in range(0, width, rows)], threads)
    return D
