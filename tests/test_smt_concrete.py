"""Concrete equals symbolic: for every shipped model, the
solver's evaluation of the formula the datapath builds equals the
Python-int simulator, on generated inputs and on recorded hardware rows
(the recorded rows whose sums cancel most: the edge cases of the data).

One query per (model, solver): the circuit becomes a function of the
inputs (``evaluation_formula``, folding off), applied to every point, so
the solver evaluates the very terms ``tcsmt diff`` solves. K is one more
than the block size (two blocks chained) or the recording's K if larger.
The fast test takes 20 points of each model of the sample, with every
solver; the slow one 200 points of one model of each distinct arithmetic,
with one solver, the four in turn (models whose
parameters are equal build the same formula: tests/model_sample.py), the
recorded edge rows of every member's recording among them.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from checkout import hwdata_folders, read
from model_sample import MODELS as SAMPLE
from model_sample import arithmetic, distinct, mask_for, scales_for

from tcsmt import datapath
from tcsmt.interp.memo import RowsInterp
from tcsmt.judge import conformance
from tcsmt.model.catalogue import all_models, arch_for_device
from tcsmt.model.formats import Format
from tcsmt.model.params import ModelParams
from tcsmt.observed import recorded as hwdata
from tcsmt.sim.dot import dot_bits
from tcsmt.smt import service
from tcsmt.smt.smtlib import evaluation_formula

MODELS = all_models()
DISTINCT = distinct(MODELS)      # the slow test; the fast one runs SAMPLE
SOLVERS = list(service.SOLVERS)


# ---------------------------------------------------------------------------
# Points
# ---------------------------------------------------------------------------

def value_near(rng: random.Random, fmt: Format, e: int) -> int:
    """Bits of a value of fmt: mostly finite with an exponent near e (so
    terms cancel and align), sometimes zero, subnormal, extreme or any bits."""
    if fmt.is_integer:
        return int_value(rng, fmt)
    r = rng.random()
    sign = rng.getrandbits(1)
    frac = rng.getrandbits(fmt.frac_bits)
    if r < 0.1:
        return fmt.pack(sign, 0, 0)
    if r < 0.15:
        return fmt.pack(sign, 0, frac or 1)
    if r < 0.2:
        return fmt.max_finite_bits(sign)
    if r < 0.23 and fmt.has_inf:
        return fmt.inf_bits(sign)
    if r < 0.3:
        return rng.getrandbits(fmt.bits)
    exp = min(max(e + fmt.bias + rng.randint(-3, 3), 1), fmt.max_exp_field)
    if exp == fmt.max_exp_field and fmt.specials == "fn":
        frac = min(frac, fmt.max_frac_at_emax)
    return fmt.pack(sign, exp, frac)


def int_value(rng: random.Random, fmt) -> int:
    """An integer format's bits: any, an end of its range, zero, or (s32 c)
    within a few products of an end, where wrapping and saturating act."""
    r = rng.random()
    if r < 0.2:
        return fmt.encode(rng.choice([fmt.lowest, fmt.highest, 0]))
    if r < 0.5 and fmt.bits == 32:
        near = rng.randrange(1 << 15)
        return fmt.encode(fmt.highest - near if rng.getrandbits(1) else fmt.lowest + near)
    return rng.getrandbits(fmt.bits)


def generated(p: ModelParams, k: int, n: int, seed: str) -> list[tuple[list[int], list[int], int]]:
    rng = random.Random(seed)
    fin, fb, fc = p.fin, p.fb, p.fc
    out = []
    for _ in range(n):
        e = rng.randint(fin.emin - 2, fin.emax)
        a = [value_near(rng, fin, e) for _ in range(k)]
        b = [value_near(rng, fb, rng.randint(-2, 2)) for _ in range(k)]
        c = value_near(rng, fc, min(max(e, fc.emin), fc.emax))
        a, b, c = cancelling(fin, fb, fc, a, b, c) if rng.random() < 0.1 else (a, b, c)
        out.append((a, b, c, *scales_for(p, k, rng), mask_for(p, k, rng)))
    return out


def cancelling(fin: Format, fb: Format, fc: Format, a, b, c):
    """a0*1 + c with c = -a0 and every other product zero: an exact zero sum."""
    v = fin.value(a[0])
    if isinstance(v, float) or fin.is_integer:
        return a, b, c
    k = len(a)
    return [a[0]] + [0] * (k - 1), [fb.pack(0, fb.bias, 0)] + [0] * (k - 1), fc.round_value(-v)


def recording(fmt_name: str, arch: str) -> hwdata.Recording | None:
    """A recorded folder of this input format, the architecture's own device first."""
    found = [(d, f.name) for d, f in hwdata_folders()
             if hwdata.FOLDER_FORMATS.get(f.name.lower()) == fmt_name]
    found.sort(key=lambda df: arch_for_device(df[0]) != arch)
    return read(*found[0]) if found else None


def edge_rows(rec: hwdata.Recording, n: int) -> list[int]:
    """The n rows whose sums cancel most: the recorded fp32 d furthest below
    the largest of c and the products (an exact zero first), where the
    alignment, the truncation and the carry bits matter most (ranked once
    per recording: every model of an arithmetic reads the same)."""
    key = (rec.device, rec.folder)
    if key not in _RANKED or _RANKED[key][0] is not rec:
        _RANKED[key] = (rec, _ranked(rec))
    return _RANKED[key][1][:n]


_RANKED: dict[tuple, tuple] = {}


def _ranked(rec: hwdata.Recording) -> list[int]:
    def floats(bits: np.ndarray, fmt: Format) -> np.ndarray:
        u, inv = np.unique(bits, return_inverse=True)
        return np.array([float(fmt.value(int(x))) for x in u])[inv].reshape(bits.shape)

    with np.errstate(all="ignore"):
        terms = np.abs(floats(rec.a, rec.in_format) * floats(rec.b, rec.in_format))
        top = np.maximum(terms.max(axis=1), np.abs(rec.c32.astype(np.uint32).view(np.float32)))
        d = np.abs(rec.d["fp32"].astype(np.uint32).view(np.float32).astype(np.float64))
        depth = np.where(d == 0, np.inf, np.log2(top) - np.log2(d))
    depth = np.nan_to_num(depth, nan=-np.inf, posinf=np.inf)
    return [int(i) for i in np.argsort(-depth, kind="stable")]


def recorded(p: ModelParams, k: int, n: int) -> list[tuple[list[int], list[int], int]]:
    """The n edge rows of a recorded folder of p's input format, zero
    products appended up to k (none when no folder has that format, or
    when the model has scales or a b format of its own: no folder does)."""
    rec = recording(p.fin.name, p.arch)
    if rec is None or rec.k > k or p.scale_format or p.fb.name != p.fin.name or p.sparsity != "dense":
        return []
    c = conformance.prepare_c(rec, p, False)
    pad = [0] * (k - rec.k)
    return [([int(x) for x in rec.a[i]] + pad, [int(y) for y in rec.b[i]] + pad, int(c[i]), None, None,
             None)
            for i in edge_rows(rec, min(n, rec.rows))]


def k_for(p: ModelParams) -> int:
    rec = recording(p.fin.name, p.arch)
    return max(p.block_size + 1, rec.k if rec else 0)


# ---------------------------------------------------------------------------
# The check
# ---------------------------------------------------------------------------

def dot_builder(p: ModelParams, k: int):
    """The datapath's dot product of length k over an interpretation's inputs."""
    n = p.scale_count(k)

    def build(I):
        a = [I.var(f"a{i}", p.fin.bits) for i in range(k)]
        b = [I.var(f"b{i}", p.fb.bits) for i in range(k)]
        sa = [I.var(f"sa{j}", p.fscale.bits) for j in range(n)] if n else None
        sb = [I.var(f"sb{j}", p.fscale.bits) for j in range(n)] if n else None
        m = [I.var(f"m{i}", 1) for i in range(k)] if p.sparsity != "dense" else None
        return datapath.dot(I, p, a, b, I.var("c", p.fc.bits), sa=sa, sb=sb, mask=m)
    return build


def symbolic_matches_concrete(p: ModelParams, solver: str, points, timeout: float,
                              want: list[int] | None = None) -> None:
    """``want``: the simulator's outputs at the points, when already known."""
    build = dot_builder(p, len(points[0][0]))

    def names(a, b, c, sa, sb, mask):
        d = {**{f"a{i}": x for i, x in enumerate(a)}, **{f"b{i}": y for i, y in enumerate(b)}, "c": c}
        d.update({f"sa{j}": x for j, x in enumerate(sa or ())})
        d.update({f"sb{j}": y for j, y in enumerate(sb or ())})
        d.update({f"m{i}": x for i, x in enumerate(mask or ())})
        return d

    named = [names(*pt) for pt in points]
    answer = service.solve(evaluation_formula(build, named), solver, timeout=timeout)
    assert answer.status == "sat", f"{solver}: {answer.status} {answer.reason}"
    bad = []
    want = want or [dot_bits(p, *pt) for pt in points]
    for j, (a, b, c, *_) in enumerate(points):
        if answer.values[f"out{j}"] != want[j]:
            bad.append((j, [hex(x) for x in a], [hex(y) for y in b], hex(c),
                        hex(answer.values[f"out{j}"]), hex(want[j])))
    assert not bad, f"{p.name}, {solver}: {len(bad)} of {len(points)} differ, first {bad[0]}"


def need(solver: str) -> None:
    if not service.installed(solver):
        pytest.skip(f"{solver} is not installed")


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("p", SAMPLE, ids=lambda p: p.name)
def test_formula_evaluated_by_the_solver_equals_the_simulator(p, solver):
    need(solver)
    k = k_for(p)
    points = recorded(p, k, 6) + generated(p, k, 14, p.name)
    symbolic_matches_concrete(p, solver, points, timeout=120)


def many_points(name: str) -> tuple[list, list[int]]:
    """200 points of the model named and the simulator's outputs there:
    the 40 edge rows of each recording its arithmetic's models read, then
    generated points."""
    p = next(m for m in DISTINCT if m.name == name)
    group = [m for m in MODELS if arithmetic(m) == arithmetic(p)]
    k = max(k_for(m) for m in group)
    points: list = []
    for m in group:
        points += [pt for pt in recorded(m, k, 40) if pt not in points]
    points = points[:150] + generated(p, k, 200 - len(points[:150]), "slow " + p.name)
    I = RowsInterp()            # the plain bits (tests/test_memo.py), unpacked and multiplied once
    return points, [dot_bits(p, *pt, I=I) for pt in points]


ROTATION = [(p, SOLVERS[i % len(SOLVERS)]) for i, p in enumerate(DISTINCT)]
"""Each distinct model with one solver, the solvers taken in turn: the
simulator is the check of the formula, so a second solver adds nothing about
the model; every solver still evaluates a quarter of the distinct formulas
(and the fast test above every solver on the sample)."""


@pytest.mark.slow
@pytest.mark.parametrize("p,solver", ROTATION, ids=[f"{p.name}-{s}" for p, s in ROTATION])
def test_formula_equals_the_simulator_on_every_distinct_model(p, solver):
    """Every distinct formula the shipped models build, evaluated by a
    solver at 200 points (the models left out build one of these formulas)."""
    need(solver)
    points, want = many_points(p.name)
    symbolic_matches_concrete(p, solver, points, timeout=600, want=want)


def test_the_points_reach_the_interesting_cases():
    """The generated inputs include zeros, subnormals, specials and sums that
    cancel to zero, for an fp16 model (so the comparison is not vacuous)."""
    p = next(m for m in MODELS if m.in_format == "float16")
    pts = generated(p, 4, 400, "coverage")
    kinds = {p.fin.classify(x) for a, *_ in pts for x in a}
    assert kinds == {"zero", "subnormal", "normal", "inf", "nan"}
    outs = [p.fout.classify(dot_bits(p, a, b, c)) for a, b, c, *_ in pts]
    assert {"zero", "normal", "nan"} <= set(outs)


def test_models_of_one_arithmetic_build_one_formula():
    """What lets the slow test run one model of each distinct arithmetic
    (tests/model_sample.py): every shipped model's formula (two blocks and
    one more product) is its arithmetic's first model's, word for word, so
    the datapath reads nothing of a model but its parameters (not its name,
    architecture, devices, instruction or description)."""
    first = {arithmetic(m): m for m in reversed(MODELS)}
    assert len({arithmetic(m) for m in DISTINCT}) == len(DISTINCT) == len(first)

    def text(p, k):
        return evaluation_formula(dot_builder(p, k), []).text
    shared = [m for m in MODELS if first[arithmetic(m)] is not m]
    assert shared, "no two shipped models share an arithmetic"
    for m in shared:
        rep = first[arithmetic(m)]
        k = 2 * m.block_size + 1
        assert text(m, k) == text(rep, k), f"{m.name} and {rep.name}: equal parameters, other formulas"
