"""The NumPy engine: the chain of blocks (tcsmt.interp.chain) replayed
with the NumPy interpretation, block after block.

For a batch of dot products (rows of a and b) every block's step program
runs on arrays of the rows; for a tile of a matrix product the step's
instructions on A's words alone run on [blocks, rows, 1] arrays and those
on B's alone on [blocks, 1, columns] arrays, a stretch of blocks at a time
(``chunk_blocks``), and the rest once per block on the tile. What is kept
from one block to the next is its c (the fields of a Term per element),
so memory depends on the tile and the stretch, not on K; the programs are
recorded once per model and block shape, not per K.
"""

from __future__ import annotations

import numpy as np

from tcsmt.interp.arrays import NpBool, NpWord, NumpyInterp
from tcsmt.interp.chain import end_program, plan, start_program, step_program
from tcsmt.interp.program import A_DEP, B_DEP, execute, with_drops
from tcsmt.model.params import ModelParams

HOIST_BYTES = 32 << 20
"""Bytes of hoisted values a stretch of blocks may hold (per tile)."""


def dot_rows(p: ModelParams, at: np.ndarray, bt: np.ndarray, c: np.ndarray,
             sat: np.ndarray | None = None, sbt: np.ndarray | None = None) -> np.ndarray:
    """d bits [R] for rows a = at.T [R, K], b = bt.T, c [R] and the scales
    transposed sat [S, R], sbt [S, R] (uint64 arrays)."""
    I = NumpyInterp(p.name)
    pl = plan(p, at.shape[0])
    cw = I.array(c, p.fc.bits)
    fields = start_program(p).run(I, {"c": cw})
    d = None
    for run in pl.runs:
        prog = step_program(p, run.key)
        for j in range(run.j0, run.j1):
            inputs = dict(fields)
            rows = pl.rows(j)
            inputs.update({f"a{i}": I.array(at[r], p.fin.bits) for i, r in enumerate(rows)})
            inputs.update({f"b{i}": I.array(bt[r], p.fb.bits) for i, r in enumerate(rows)})
            if pl.srows is not None:
                assert sat is not None and sbt is not None     # a plan has scale rows only with scales
                sw = p.scaling()[0].bits
                for s, r in enumerate(pl.srows[j]):
                    inputs[f"sa{s}"] = I.array(sat[r], sw)
                    inputs[f"sb{s}"] = I.array(sbt[r], sw)
            fields = prog.run(I, inputs)
            d = fields.pop("d")
    out = end_program(p).run(I, {"d": d, "c": cw})["out"]
    return I.value(out, c.shape)


def gemm_tile(p: ModelParams, at: np.ndarray, bt: np.ndarray, c: np.ndarray, sa, sb,
              rows: slice, cols: slice) -> np.ndarray:
    """D's bits of one tile: rows ``rows`` of A (at = A's bits transposed,
    [K, M]) times columns ``cols`` of B (bt [K, N]) plus c (the tile of C's
    bits), with the scales sa [S, M], sb [S, N] of a block-scaled model."""
    I = NumpyInterp(p.name)
    pl = plan(p, at.shape[0])
    cw = I.array(c, p.fc.bits)
    fields = start_program(p).run(I, {"c": cw})
    d = None
    tm, tn = c.shape
    for run in pl.runs:
        split = _split(step_program(p, run.key))
        step = max(1, min(run.j1 - run.j0, HOIST_BYTES // (8 * max(1, split.held) * (tm + tn))))
        for j0 in range(run.j0, run.j1, step):
            blocks = np.arange(j0, min(run.j1, j0 + step))
            env = split.hoist(I, pl, blocks, at, bt, sa, sb, rows, cols)
            for jj in range(len(blocks)):
                fields = split.rest(I, env, jj, fields)
                d = fields.pop("d")
    out = end_program(p).run(I, {"d": d, "c": cw})["out"]
    return I.value(out, c.shape)


class _Split:
    """A step program cut into its A part, B part and rest (see
    Program.hoisted), run over a stretch of blocks."""

    def __init__(self, prog):
        pa, pb, rest = prog.hoisted()
        self.prog, self.pa, self.pb = prog, pa, pb
        outs = set(prog.outs.values())
        used = {a for ins in rest for a in ins[1]} | outs
        self.shared = sorted(s for s in used if prog.dep[s] in (A_DEP, B_DEP) and prog.template[s] is None)
        self.held = len(self.shared)
        self.rest_code = with_drops(rest, prog.template, outs)
        keep = set(self.shared)
        self.pre = with_drops(pa + pb, prog.template, keep)

    def hoist(self, I, pl, blocks, at, bt, sa, sb, rows, cols) -> list:
        """The A and B parts on [blocks, rows, 1] and [blocks, 1, cols] words."""
        p, prog = pl.p, self.prog
        env = list(prog.template)
        pos = blocks[:, None] * pl.size
        for name, s in prog.inputs.items():
            head, i = name.rstrip("0123456789"), name[len(name.rstrip("0123456789")):]
            if head in ("a", "b"):
                src, fmt = (at, p.fin) if head == "a" else (bt, p.fb)
                x = src[pl.row_at(pos[:, 0] + int(i))]
            elif head in ("sa", "sb"):
                src = sa if head == "sa" else sb
                x, fmt = src[pl.srows[blocks, int(i)]], p.fscale
            else:
                continue
            x = x[:, rows, None] if head in ("a", "sa") else x[:, None, cols]
            env[s] = I.array(x, fmt.bits)
        execute(I, self.pre, env)
        return env

    def rest(self, I, env: list, jj: int, fields: dict) -> dict:
        """Block jj of the stretch: the rest of the step on the tile."""
        prog = self.prog
        tenv = list(prog.template)
        for s in self.shared:
            tenv[s] = _at(env[s], jj)
        for name, s in prog.inputs.items():
            if name in fields:
                tenv[s] = fields[name]
        execute(I, self.rest_code, tenv)
        return {name: tenv[s] for name, s in prog.outs.items()}


def _split(prog) -> _Split:
    sp = getattr(prog, "_split", None)
    if sp is None:
        sp = prog._split = _Split(prog)
    return sp


def _at(x, jj: int):
    """Block jj's values of a hoisted word or Bool ([blocks, ...] arrays)."""
    if isinstance(x, NpWord):
        return x if type(x.v) is int else NpWord(x.v[jj], x.w, x.dirty)
    return x if type(x.b) is bool else NpBool(x.b[jj])
