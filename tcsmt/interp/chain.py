"""The chain of blocks of tcsmt.datapath.chain as recorded programs, and
the plan of a dot product of length k.

Three kinds of program (tcsmt.interp.program), each recorded once per
model (and per block shape) with the recording interpretation, whatever k:

* ``start``: the word c -> the fields of the Term block 0 starts from
  (``datapath.chain.first_c``);
* ``step``: a block's step (``datapath.chain.block_step``) followed by
  ``next_c``: the fields of the block's c and the words of its products'
  inputs -> its rounded result ``d`` and the fields of the next block's c;
* ``end``: the last block's result d and c -> the dot product's bits
  (``datapath.chain.end``).

A step's inputs are a0.., b0.. (the block's products, in the order the
block takes them), sa0.., sb0.. (its scale slots: the distinct scale words
its products read) and c.sign, c.exp, c.sig, c.nan, c.inf, c.live (the
fields of its c). A block's shape (``StepKey``) is its number of products,
which slot each product's scales come from, whether it is the dot product
alone (separate chaining) and the shape of its c (a Term unpacked from
c_format or from result_format): the programs of full blocks are one.

``plan(p, k)`` lays a dot product of length k out for the engines that run
the chain (tcsmt.sim.replay, tcsmt.sim.kernels): the row of A and B each
product of the chain reads (``order``: a table only where the datapath
takes the products out of order), the scale row each block's slots read
(``srows``), and runs of consecutive blocks that share a step program:
block 0 when its c has another shape, the full blocks, the partial last
block. The engines run: fields = start(c); for each run, for each block j:
(d, fields) = step(fields, inputs of block j); D = end(d, c).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from tcsmt.datapath import chain as dc
from tcsmt.datapath.terms import Term, exp_width, unpack_input
from tcsmt.interp.program import Program
from tcsmt.interp.trace import TraceInterp
from tcsmt.model.params import ModelParams

TERM_WORDS = ("sign", "exp", "sig", "nan", "inf", "live")
"""The fields of a Term that are data (frac and lead are static)."""


@dataclass(frozen=True)
class CShape:
    """The static shape of a block's c: width of each data field (0: a
    Bool, None: absent), fraction bits, alignment by the leading one."""
    widths: tuple
    frac: int
    lead: bool


@dataclass(frozen=True)
class StepKey:
    n: int               # products in the block
    slots: tuple         # per product, the scale slot it reads (() without scales)
    single: bool         # the dot product is this block alone (separate chaining)
    c: CShape


def c_fields(t: Term) -> dict:
    return {f"c.{f}": getattr(t, f) for f in TERM_WORDS if getattr(t, f) is not None}


def c_shape(T, t: Term) -> CShape:
    return CShape(tuple(None if getattr(t, f) is None else T.width(getattr(t, f)) for f in TERM_WORDS),
                  t.frac, t.lead)


def c_inputs(T, shape: CShape) -> Term:
    """A Term whose data fields are the inputs c.sign, c.exp, ..."""
    vals = {f: None if w is None else T.input(f"c.{f}", w) for f, w in zip(TERM_WORDS, shape.widths)}
    return Term(vals["sign"], vals["exp"], vals["sig"], shape.frac, vals["nan"], vals["inf"],
                shape.lead, vals["live"])


# ---------------------------------------------------------------------------
# The programs
# ---------------------------------------------------------------------------

@functools.lru_cache(maxsize=64)
def start_program(p: ModelParams) -> Program:
    T = TraceInterp()
    ew = exp_width(p)
    t = dc.first_c(T, p, unpack_input(T, p, p.fc, T.input("c", p.fc.bits), ew, is_c=True), ew)
    return Program(c_fields(t), f"{p.name} start")


@functools.lru_cache(maxsize=64)
def start_shape(p: ModelParams) -> CShape:
    T = TraceInterp()
    ew = exp_width(p)
    return c_shape(T, dc.first_c(T, p, unpack_input(T, p, p.fc, T.input("c", p.fc.bits), ew, is_c=True), ew))


@functools.lru_cache(maxsize=64)
def carry_shape(p: ModelParams) -> CShape:
    T = TraceInterp()
    return c_shape(T, dc.next_c(T, p, T.input("d", dc.result_format(p).bits), exp_width(p)))


@functools.lru_cache(maxsize=256)
def step_program(p: ModelParams, key: StepKey) -> Program:
    T = TraceInterp()
    ew = exp_width(p)
    a = [T.input(f"a{i}", p.fin.bits) for i in range(key.n)]
    b = [T.input(f"b{i}", p.fb.bits) for i in range(key.n)]
    sa = sb = None
    if key.slots:
        ns, sw = max(key.slots) + 1, p.scaling()[0].bits
        wa = [T.input(f"sa{s}", sw) for s in range(ns)]
        wb = [T.input(f"sb{s}", sw) for s in range(ns)]
        sa, sb = [wa[s] for s in key.slots], [wb[s] for s in key.slots]
    c = c_inputs(T, key.c)
    d = dc.block_step(T, p, a, b, sa, sb, lambda: c, ew, key.single)
    nxt = dc.next_c(T, p, d, ew)
    return Program({"d": d} | c_fields(nxt), f"{p.name} step {key.n}")


@functools.lru_cache(maxsize=64)
def end_program(p: ModelParams) -> Program:
    T = TraceInterp()
    ew = exp_width(p)
    c = unpack_input(T, p, p.fc, T.input("c", p.fc.bits), ew, is_c=True)
    d = dc.end(T, p, T.input("d", dc.result_format(p).bits), c, ew)
    return Program({"out": d}, f"{p.name} end")


# ---------------------------------------------------------------------------
# The plan of a dot product of length k
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Run:
    """Blocks j0 .. j1 - 1, all run by the step program of ``key``."""
    j0: int
    j1: int
    key: StepKey


@dataclass(frozen=True)
class Plan:
    p: ModelParams
    k: int
    size: int                  # products per full block
    order: np.ndarray | None   # [k] int64: the product (row of A, B) at each position of the
                               # chain; None: in order (no table)
    srows: np.ndarray | None   # [blocks, slots] int64: the scale row of each block's slots
    runs: tuple
    blocks: int

    def row_at(self, positions: np.ndarray) -> np.ndarray:
        """The rows of A and B at these positions of the chain."""
        return positions if self.order is None else self.order[positions]

    def rows(self, j: int) -> np.ndarray:
        return self.row_at(np.arange(j * self.size, min(self.k, (j + 1) * self.size)))


CHUNK = 1 << 12
"""Blocks whose scale rows are laid out at a time (bounds the temporaries)."""


@functools.lru_cache(maxsize=16)
def plan(p: ModelParams, k: int) -> Plan:
    """The plan of a dot product of length k (see the module doc)."""
    if k < 1:
        raise ValueError("a dot product needs k >= 1")
    bs, blocks = p.block_size, dc.block_count(p, k)
    order = dc.chain_order(p, k)
    order = None if isinstance(order, range) else np.asarray(order, dtype=np.int64)
    pl = Plan(p, k, bs, order, None, (), blocks)
    nfull = k // bs
    slots_full, slots_last, srows = (), (), None
    if p.scale_format is not None:
        slots_full, slots_last, srows = _scale_slots(pl, nfull)
    single = dc.alone(p, k)
    first, later = start_shape(p), carry_shape(p)
    runs, j = [], 0
    if first != later or single or nfull == 0:
        n = min(k, bs)
        runs.append(Run(0, 1, StepKey(n, slots_full if n == bs else slots_last, single, first)))
        j = 1
    if j < nfull:
        runs.append(Run(j, nfull, StepKey(bs, slots_full, False, first if j == 0 else later)))
    if blocks > max(nfull, j):
        runs.append(Run(nfull, blocks, StepKey(k - nfull * bs, slots_last, False, later)))
    return Plan(p, k, bs, order, srows, tuple(runs), blocks)


def _scale_slots(pl: Plan, nfull: int):
    """(slots of a full block, slots of the last block, scale rows [blocks,
    slots]). A block's slots are the distinct scale indices its products
    read, in order; the full blocks share block 0's pattern when every one
    follows it, else every product reads its own slot."""
    p, bs = pl.p, pl.size

    def scales(j0: int, j1: int) -> np.ndarray:          # [blocks, bs] scale indices
        pos = np.arange(j0 * bs, j1 * bs).reshape(j1 - j0, bs)
        return pl.row_at(pos) // p.scale_block
    pattern = _pattern(scales(0, 1)[0]) if nfull else ()
    rows = np.zeros((nfull, 0), dtype=np.int64)
    if nfull:
        first = [pattern.index(s) for s in range(max(pattern) + 1)]
        parts = [scales(j, min(nfull, j + CHUNK)) for j in range(0, nfull, CHUNK)]
        if not all(np.array_equal(x, x[:, [first[s] for s in pattern]]) for x in parts):
            pattern, first = tuple(range(bs)), list(range(bs))
        rows = np.concatenate([x[:, first] for x in parts])
    last = pl.row_at(np.arange(nfull * bs, pl.k)) // p.scale_block
    slots_last = _pattern(last) if len(last) else ()
    width = max(rows.shape[1], len(set(slots_last)), 1)
    srows = np.zeros((pl.blocks, width), dtype=np.int64)
    srows[:nfull, :rows.shape[1]] = rows
    if len(last):
        lf = [slots_last.index(s) for s in range(max(slots_last) + 1)]
        srows[nfull, :len(lf)] = last[lf]
    return pattern, slots_last, srows


def _pattern(scale: np.ndarray) -> tuple:
    """Each product's slot: the rank of its scale index among the block's
    distinct ones, in order of first appearance."""
    seen: dict = {}
    return tuple(seen.setdefault(int(s), len(seen)) for s in scale)


def clear() -> None:
    """Forget every recorded program and plan (tests record them again,
    with the recorder's fused forms turned off)."""
    for fn in (start_program, start_shape, carry_shape, step_program, end_program, plan):
        fn.cache_clear()


__all__ = ["clear", "CShape", "Plan", "Run", "StepKey", "c_fields", "end_program", "plan", "start_program",
           "step_program"]
