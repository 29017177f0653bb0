"""The LLVM IR interpretation of the vocabulary (tcsmt.interp.kernel_ir),
compiled and run, against the Python-int one: every primitive and fused
form, exhaustive at widths up to 5 bits, random at the edges of the
32-bit and 64-bit lanes (31, 32, 33, 63 and 64 bits), every shift amount
included."""

from __future__ import annotations

import itertools
from functools import partial

import numpy as np
import pytest

from tcsmt.interp.ints import INT, IntBool, IntWord
from tcsmt.interp.program import Program
from tcsmt.interp.trace import TraceInterp

pytest.importorskip("llvmlite")

from tcsmt.interp.kernel_ir import LANES, Body, Fn, Loop  # noqa: E402
from tcsmt.sim.llvm import Library  # noqa: E402

BINARY = ["add", "sub", "mul", "bvand", "bvor", "bvxor", "shl", "lshr", "ashr",
          "eq", "ult", "ule", "slt", "sle"]
FUSED = {  # recorded as one fused operation (tcsmt.interp.trace), computed here by its composition
    "smax": lambda I, x, y: I.ite(I.slt(x, y), y, x), "smin": lambda I, x, y: I.ite(I.slt(x, y), x, y),
    "umax": lambda I, x, y: I.ite(I.ult(x, y), y, x), "umin": lambda I, x, y: I.ite(I.ult(x, y), x, y),
}


def cases(w: int, n: int, seed: int):
    """Operand pairs: every pair for w <= 5, else n random ones with the
    extremes and every shift amount near w."""
    if w <= 5:
        xs, ys = zip(*itertools.product(range(1 << w), repeat=2))
        return np.array(xs, dtype=np.uint64), np.array(ys, dtype=np.uint64)
    rng = np.random.default_rng(seed)
    top = (1 << w) - 1
    edges = [0, 1, 2, top, top - 1, 1 << (w - 1), (1 << (w - 1)) - 1] + list(range(w - 3, w + 4))
    xs = [int(x) for x in rng.integers(0, 2 ** 63, n, dtype=np.uint64)] + edges * len(edges)
    ys = [int(y) for y in rng.integers(0, 2 ** 63, n, dtype=np.uint64)] + [e for e in edges for _ in edges]
    xs = [(x * 3) & top for x in xs]
    ys = [y & top for y in ys]
    return np.array(xs, dtype=np.uint64), np.array(ys, dtype=np.uint64)


def compiled(programs: dict) -> Library:
    """One function per program: f(X, Y, Z, OUT, vectors) reading inputs
    x, y, z (words or Bools, as uint64) and writing output "out"."""
    from llvmlite import ir
    m = ir.Module(name="conformance")
    for name, prog in programs.items():
        fn = Fn(m, name, ["X*", "Y*", "Z*", "OUT*", "n"], {})
        vecs = Loop(fn.b, fn.arg["n"])
        at = fn.b.mul(vecs.i, fn.i(LANES))
        src = {prog.inputs[v]: a for v, a in (("x", "X"), ("y", "Y"), ("z", "Z")) if v in prog.inputs}
        body = Body(fn.b, prog, lambda s, src=src, prog=prog, fn=fn, at=at:
                    fn.vload(fn.ptr(src[s], at), prog.widths[s], 64))
        body.write(prog.code)
        out = prog.outs["out"]
        fn.vstore(body.fetch(out), fn.ptr("OUT", at), prog.widths[out], 64)
        vecs.close()
        fn.done()
    return Library(str(m), "conformance")


def record(build, widths: dict) -> Program:
    T = TraceInterp()
    return Program({"out": build(T, *(T.input(v, w) for v, w in widths.items()))})


def run(lib: Library, name: str, *arrays) -> np.ndarray:
    n = -(-len(arrays[0]) // LANES) * LANES
    padded = [np.zeros(n, np.uint64) for _ in range(3)]
    for p, a in zip(padded, arrays):
        p[:len(a)] = a
    out = np.zeros(n, np.uint64)
    lib.function(name, 5)(*(p.ctypes.data for p in padded), out.ctypes.data, n // LANES)
    return out[:len(arrays[0])]


def primitive(op: str, T, *args, static: tuple = ()):
    return getattr(T, op)(*args, *static)


def arg(w: int, a):
    return IntBool(bool(a)) if w == 0 else IntWord(int(a), w)


def value(r) -> int:
    return int(r.b) if isinstance(r, IntBool) else r.v


@pytest.mark.parametrize("w", [1, 2, 3, 5, 31, 32, 33, 63, 64])
def test_binary_primitives_and_fused_forms_equal_the_int_interpretation(w):
    ops = {op: partial(primitive, op) for op in BINARY} | FUSED
    progs = {op: record(build, {"x": w, "y": w}) for op, build in ops.items()}
    assert {progs[op].code[-1][0] for op in FUSED} == set(FUSED)      # recorded as fused forms
    lib = compiled(progs)
    xs, ys = cases(w, 300, w)
    for op, build in ops.items():
        got = run(lib, op, xs, ys)
        want = [value(build(INT, IntWord(int(x), w), IntWord(int(y), w))) for x, y in zip(xs, ys)]
        bad = np.flatnonzero(got != np.array(want, dtype=np.uint64))
        i = bad[0] if bad.size else 0
        assert not bad.size, f"{op} w={w}: {xs[i]:#x}, {ys[i]:#x} -> {got[i]:#x}, want {want[i]:#x}"


@pytest.mark.parametrize("w", [1, 4, 31, 32, 33, 64])
def test_unary_primitives_extensions_and_every_extract_equal_the_int_interpretation(w):
    ops = {"neg": partial(primitive, "neg"), "bvnot": partial(primitive, "bvnot")}
    for n in (1, 31 - w % 31, 64 - w):
        if n > 0 and w + n <= 64:
            ops[f"zext{n}"] = partial(primitive, "zext", static=(n,))
            ops[f"sext{n}"] = partial(primitive, "sext", static=(n,))
    for hi in range(w):
        for lo in {0, hi, hi // 2, max(0, hi - 1)}:
            ops[f"extract{hi}_{lo}"] = partial(primitive, "extract", static=(hi, lo))
    lib = compiled({op: record(build, {"x": w}) for op, build in ops.items()})
    xs, _ = cases(w, 300, w + 1)
    xs = np.unique(xs)
    for op, build in ops.items():
        got = run(lib, op, xs)
        want = np.array([value(build(INT, IntWord(int(x), w))) for x in xs], dtype=np.uint64)
        assert np.array_equal(got, want), op


@pytest.mark.parametrize("wx,wy", [(1, 1), (3, 5), (16, 16), (31, 1), (32, 32), (1, 63), (40, 24)])
def test_concat_equals_the_int_interpretation(wx, wy):
    lib = compiled({"concat": record(lambda T, x, y: T.concat(x, y), {"x": wx, "y": wy})})
    rng = np.random.default_rng(wx * 100 + wy)
    xs = rng.integers(0, 2 ** 63, 500, dtype=np.uint64) & np.uint64((1 << wx) - 1)
    ys = rng.integers(0, 2 ** 63, 500, dtype=np.uint64) & np.uint64((1 << wy) - 1)
    want = [(int(x) << wy) | int(y) for x, y in zip(xs, ys)]
    assert np.array_equal(run(lib, "concat", xs, ys), np.array(want, dtype=np.uint64))


def test_bool_connectives_ite_and_neg_if_equal_the_int_interpretation():
    ops = {
        "ite_w": (lambda T, x, y, z: T.ite(x, y, z), {"x": 0, "y": 33, "z": 33}),
        "ite_b": (lambda T, x, y, z: T.ite(x, y, z), {"x": 0, "y": 0, "z": 0}),
        "xor_": (lambda T, x, y, z: T.ite(x, T.not_(y), y), {"x": 0, "y": 0, "z": 0}),
        "and3": (lambda T, x, y, z: T.and_(x, y, z), {"x": 0, "y": 0, "z": 0}),
        "or3": (lambda T, x, y, z: T.or_(x, T.not_(y), z), {"x": 0, "y": 0, "z": 0}),
        "neg_if": (lambda T, x, y, z: T.ite(x, T.neg(y), y), {"x": 0, "y": 7, "z": 7}),
        "neg_if64": (lambda T, x, y, z: T.ite(x, T.neg(y), y), {"x": 0, "y": 64, "z": 64}),
    }
    progs = {op: record(build, widths) for op, (build, widths) in ops.items()}
    assert progs["xor_"].code[-1][0] == "xor_" and progs["neg_if"].code[-1][0] == "neg_if"
    lib = compiled(progs)
    rng = np.random.default_rng(3)
    for op, (build, widths) in ops.items():
        arrays = [rng.integers(0, 2, 64, dtype=np.uint64) if widths[v] == 0 else
                  rng.integers(0, 2 ** 63, 64, dtype=np.uint64) & np.uint64((1 << widths[v]) - 1)
                  for v in "xyz"]

        want = [value(build(INT, *(arg(widths[v], a) for v, a in zip("xyz", row)))) for row in zip(*arrays)]
        assert np.array_equal(run(lib, op, *arrays), np.array(want, dtype=np.uint64)), op
