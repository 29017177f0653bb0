"""The SMT-LIB interpretation without a solver: hash-consing, constant
folding against the Python-int interpretation, the identities folding uses,
the data-branch guard, the text it writes, and the golden text of a small
fixed query (refresh with TCSMT_REFRESH_GOLDEN=1).

Where the solvers come in (every primitive evaluated by each solver, the
datapath's formulas evaluated on fixed inputs) see test_smt_conformance.py
and test_smt_concrete.py.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from model_sample import MODELS, mask_for, scales_for

from tcsmt import datapath
from tcsmt.datapath import bv
from tcsmt.interp.ints import INT, DataBranchError, IntBool, IntWord
from tcsmt.model.catalogue import all_models
from tcsmt.sim.dot import dot_bits
from tcsmt.smt.smtlib import MAX_INLINE_DEPTH, build_formula, function_text, to_smtlib
from tcsmt.smt.terms import BOOL, SmtInterp, evaluate, reachable

GOLDEN = Path(__file__).parent / "golden"
REFRESH = os.environ.get("TCSMT_REFRESH_GOLDEN") == "1"

WORD_BINARY = ["add", "sub", "mul", "bvand", "bvor", "bvxor", "shl", "lshr", "ashr"]
COMPARES = ["eq", "ult", "ule", "slt", "sle"]


def golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if REFRESH or not path.exists():
        if not REFRESH:
            pytest.fail(f"{path} is missing: run with TCSMT_REFRESH_GOLDEN=1 to write it")
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"{name} changed (TCSMT_REFRESH_GOLDEN=1 to accept)"


def int_value(x) -> int:
    return int(x.b) if isinstance(x, IntBool) else x.v


# ---------------------------------------------------------------------------
# Hash-consing and folding
# ---------------------------------------------------------------------------

def test_same_operation_on_same_operands_is_one_node():
    I = SmtInterp()
    x, y = I.var("x", 8), I.var("y", 8)
    assert I.add(x, y) is I.add(x, y)
    assert I.add(x, y) is not I.add(y, x)
    assert I.const(0, 1) is not I.const(0, 5)          # width is part of a constant
    assert I.var("x", 8) is x
    with pytest.raises(ValueError):
        I.var("x", 9)


@pytest.mark.parametrize("prim", WORD_BINARY + COMPARES)
def test_folding_a_binary_primitive_gives_the_python_int_result(prim):
    I = SmtInterp()
    rng = random.Random(prim)
    for w in (1, 3, 8, 13, 64):
        for _ in range(30):
            x, y = rng.getrandbits(w), rng.getrandbits(w)
            if prim in ("shl", "lshr", "ashr") and rng.random() < 0.5:
                y = rng.randrange(w + 2) % (1 << w)
            r = getattr(I, prim)(I.const(x, w), I.const(y, w))
            assert r.is_const
            assert r.value == int_value(getattr(INT, prim)(IntWord(x, w), IntWord(y, w)))


def test_folding_the_other_primitives():
    I = SmtInterp()
    x = I.const(0b1011, 4)
    assert I.extract(x, 2, 1).value == 0b01
    assert I.concat(x, I.const(1, 2)).value == 0b101101
    assert I.zext(x, 3).value == 0b1011 and I.zext(x, 3).width == 7
    assert I.sext(x, 2).value == 0b111011
    assert I.neg(x).value == 0b0101 and I.bvnot(x).value == 0b0100
    t, f = I.bool_const(True), I.bool_const(False)
    assert I.and_(t, f).value == 0 and I.or_(t, f).value == 1 and I.not_(f).value == 1
    assert I.ite(t, x, I.const(0, 4)) is x


def test_identities_with_one_constant_are_sound():
    """Each identity folding applies with one constant operand gives the
    same value as the Python-int interpretation on every 4-bit input."""
    I = SmtInterp()
    x = I.var("x", 4)
    zero = I.const(0, 4)
    exprs = [I.add(x, zero), I.add(zero, x), I.sub(x, zero), I.bvor(zero, x), I.bvxor(x, zero),
             I.shl(x, zero), I.lshr(zero, x), I.mul(x, zero), I.bvand(zero, x), I.extract(x, 3, 0),
             I.zext(x, 0), I.ite(I.eq(x, x), x, zero), I.ite(I.ult(x, zero), x, x)]
    plain = SmtInterp(fold=False)
    px, pz = plain.var("x", 4), plain.const(0, 4)
    slow = [plain.add(px, pz), plain.add(pz, px), plain.sub(px, pz), plain.bvor(pz, px),
            plain.bvxor(px, pz), plain.shl(px, pz), plain.lshr(pz, px), plain.mul(px, pz),
            plain.bvand(pz, px), plain.extract(px, 3, 0), plain.zext(px, 0),
            plain.ite(plain.eq(px, px), px, pz), plain.ite(plain.ult(px, pz), px, px)]
    assert sum(e.op == "const" or e is x for e in exprs) == len(exprs)   # all folded
    assert all(not s.is_const for s in slow)                            # none folded
    for v in range(16):
        for e, s in zip(exprs, slow):
            assert evaluate(e, {"x": v}) == evaluate(s, {"x": v})


def test_connectives_fold_constants_and_duplicates():
    I = SmtInterp()
    p, q = I.bool_var("p"), I.bool_var("q")
    t, f = I.bool_const(True), I.bool_const(False)
    assert I.and_(p, t) is p and I.and_(p, f).value == 0 and I.and_().value == 1
    assert I.or_(q, f) is q and I.or_(q, t).value == 1 and I.or_().value == 0
    assert I.and_(p, q, p).args == (p, q)
    assert I.not_(I.not_(p)) is p


def test_folding_off_builds_every_node():
    I = SmtInterp(fold=False)
    r = I.add(I.const(1, 4), I.const(2, 4))
    assert r.op == "add" and evaluate(r, {}) == 3


def test_widths_and_sorts_are_checked():
    I = SmtInterp()
    x, y, p = I.var("x", 4), I.var("y", 5), I.bool_var("p")
    for bad in (lambda: I.add(x, y), lambda: I.eq(x, y), lambda: I.ite(p, x, y),
                lambda: I.ite(x, x, x), lambda: I.and_(p, x), lambda: I.extract(x, 4, 0),
                lambda: I.eq(p, p), lambda: I.var("bvadd", 3), lambda: I.var("and", 3)):
        with pytest.raises(ValueError):
            bad()


def test_a_python_if_on_a_term_raises():
    I = SmtInterp()
    with pytest.raises(DataBranchError):
        bool(I.ult(I.var("x", 4), I.const(3, 4)))
    with pytest.raises(DataBranchError):
        if I.var("y", 4):
            pass


# ---------------------------------------------------------------------------
# The datapath through the SMT interpretation (no solver: Python evaluates the terms)
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("p", MODELS, ids=lambda p: p.name)
def test_datapath_terms_evaluate_to_the_simulator(p):
    """Every shipped model (tests/model_sample.py) builds its formula (no
    data branch), and the terms, evaluated node by node, give the
    simulator's bits."""
    k = min(p.block_size, 8) + 1                   # two blocks where the block is short
    if p.group_size > 1:
        k = p.block_size + p.group_size            # whole groups, two blocks
    I = SmtInterp()
    a = [I.var(f"a{i}", p.fin.bits) for i in range(k)]
    b = [I.var(f"b{i}", p.fb.bits) for i in range(k)]
    c = I.var("c", p.fc.bits)
    n = p.scale_count(k)
    sa = [I.var(f"sa{j}", p.fscale.bits) for j in range(n)] if n else None
    sb = [I.var(f"sb{j}", p.fscale.bits) for j in range(n)] if n else None
    m = [I.var(f"m{i}", 1) for i in range(k)] if p.sparsity != "dense" else None
    d = datapath.dot(I, p, a, b, c, sa=sa, sb=sb, mask=m)
    rng = random.Random(p.name)
    for _ in range(5):
        va = [rng.getrandbits(p.fin.bits) for _ in range(k)]
        vb = [rng.getrandbits(p.fb.bits) for _ in range(k)]
        vc = rng.getrandbits(p.fc.bits)
        vsa, vsb = scales_for(p, k, rng)
        vm = mask_for(p, k, rng)
        values = {**{f"a{i}": x for i, x in enumerate(va)}, **{f"b{i}": y for i, y in enumerate(vb)}, "c": vc}
        values.update({f"sa{j}": x for j, x in enumerate(vsa or ())})
        values.update({f"sb{j}": y for j, y in enumerate(vsb or ())})
        values.update({f"m{i}": x for i, x in enumerate(vm or ())})
        assert evaluate(d, values) == dot_bits(p, va, vb, vc, vsa, vsb, vm)


# ---------------------------------------------------------------------------
# Text
# ---------------------------------------------------------------------------

def test_shared_terms_are_defined_once_and_deep_ones_named():
    I = SmtInterp()
    x = I.var("x", 8)
    s = I.add(x, I.const(1, 8))
    text = to_smtlib([I.eq(I.mul(s, s), x)], I.inputs)
    assert text.count(f"(define-fun _n{s.id} () (_ BitVec 8) (bvadd x #x01))") == 1
    assert f"(assert (= (bvmul _n{s.id} _n{s.id}) x))" in text
    chain = x
    for i in range(3 * MAX_INLINE_DEPTH):
        chain = I.add(chain, I.const(i + 1, 8))
    deep = to_smtlib([I.eq(chain, x)], I.inputs)
    assert 2 <= deep.count("define-fun") <= 4
    assert all(line.count("(") < 2 * MAX_INLINE_DEPTH + 10 for line in deep.splitlines())


def test_function_text_binds_shared_terms_in_layers():
    I = SmtInterp()
    x = I.var("x", 4)
    s = I.add(x, x)
    t = I.mul(s, s)
    text = function_text("f", {"x": x}, I.bvxor(t, t))
    assert text.startswith("(define-fun f ((x (_ BitVec 4))) (_ BitVec 4)")
    assert text.index(f"(_n{s.id} (bvadd x x))") < text.index(f"(_n{t.id} (bvmul _n{s.id} _n{s.id}))")
    assert text.count("(let") == 2


def test_formula_drops_true_assertions_and_sees_false():
    f = build_formula(lambda I: [I.eq(I.var("x", 4), I.var("x", 4)), I.ult(I.var("y", 4), I.const(3, 4))])
    assert "(assert true)" not in f.text and not f.trivially_unsat
    g = build_formula(lambda I: [I.not_(I.eq(I.var("x", 4), I.var("x", 4)))])
    assert g.trivially_unsat
    assert f.inputs == {"x": 4, "y": 4}
    assert len(f.sha256) == 64 and f.sha256 != g.sha256


def small_query(I):
    """clz, a shift by a wide amount and a sticky bit: a few derived
    operations of tcsmt.datapath.bv on two inputs."""
    x, s = I.var("x", 6), I.var("s", 4)
    lz = bv.clz(I, x)
    return [I.eq(lz, I.const(2, I.width(lz))), bv.shifted_out(I, x, s),
            I.ult(bv.lshr_by(I, x, s), I.const(3, 6)), I.bool_var("p")]


def test_golden_smtlib_text_of_a_small_query():
    golden("small_query.smt2", build_formula(small_query, description="golden: small query").text)


def test_bool_inputs_are_declared():
    f = build_formula(small_query)
    assert "(declare-const p Bool)" in f.text and f.inputs["p"] == BOOL


def test_a_mul_hook_replaces_multipliers_but_not_constants():
    """A query's own abstraction: each product of two words becomes a free
    input (the same product, the same input); a constant product folds."""
    seen = {}

    def hook(I, x, y):
        key = (x.id, y.id)
        if key not in seen:
            seen[key] = I.var(f"p{len(seen)}", I.width(x))
        return seen[key]

    I = SmtInterp(mul_hook=hook)
    x, y = I.var("x", 8), I.var("y", 8)
    assert I.mul(x, y) is I.mul(x, y) is I.inputs["p0"]
    assert I.mul(I.const(3, 8), I.const(5, 8)).value == 15
    assert len(seen) == 1
    p = next(m for m in all_models() if m.name == "volta-fp16-fp32")
    d = datapath.dot(I, p, [I.var("a0", 16)], [I.var("b0", 16)], I.var("c", 32))
    assert len(seen) == 2 and "p1" in I.inputs
    assert all(n.op != "mul" for n in reachable([d])[0])
