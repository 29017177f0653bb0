"""Structured sparsity (tcsmt.datapath.sparse): a sparse model with every
product enabled is its dense model bit for bit; with products disabled it
is the dense model on zeroed operands (the logical reading) or on the
selected products packed in order (the compressed reading); the NumPy and
SMT interpretations equal the Python-int one; the sparse-order property
separates the readings with a witness that replays."""

from __future__ import annotations

import random

import numpy as np
import pytest

from tcsmt import datapath, matmul
from tcsmt.errors import ModelFileError, UserError
from tcsmt.model.catalogue import all_models
from tcsmt.model.choose import choose
from tcsmt.properties.run import run_named
from tcsmt.sim.batch import dot_batch
from tcsmt.sim.dot import dot, dot_bits
from tcsmt.smt import service
from tcsmt.smt.smtlib import evaluation_formula

SPARSE = [m.name for m in all_models() if m.sparsity != "dense"]
READINGS = ["logical", "compressed"]


def dense_of(p):
    return p.replace(sparsity="dense", sparse_order="logical")


def value(rng: random.Random, fmt) -> int:
    """Bits of fmt: mostly ordinary, sometimes zero, an extreme, or a special."""
    r = rng.random()
    if fmt.is_integer:
        return fmt.encode(rng.choice([fmt.lowest, fmt.highest, 0])) if r < 0.2 else rng.getrandbits(fmt.bits)
    if r < 0.1:
        return 0
    if r < 0.15 and fmt.has_nan:
        return fmt.nan_bits()
    if r < 0.2 and fmt.has_inf:
        return fmt.inf_bits(rng.getrandbits(1))
    e = fmt.bias + rng.randint(-4, 4)
    return fmt.pack(rng.getrandbits(1), e, rng.getrandbits(fmt.frac_bits))


def legal_mask(rng: random.Random, p, k: int) -> list[int]:
    want, group = datapath.sparse.PATTERNS[p.sparsity]
    out = []
    for _ in range(0, k, group):
        picked = set(rng.sample(range(group), want))
        out += [int(i in picked) for i in range(group)]
    return out


def rows(p, n: int, k: int, seed: str):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        a = [value(rng, p.fin) for _ in range(k)]
        b = [value(rng, p.fb) for _ in range(k)]
        out.append((a, b, value(rng, p.fc), legal_mask(rng, p, k)))
    return out


def k_of(p) -> int:
    return 3 * p.block_size if p.block_size <= 16 else p.block_size


@pytest.mark.parametrize("order", READINGS)
@pytest.mark.parametrize("name", SPARSE)
def test_every_product_enabled_is_the_dense_model(name, order):
    p = choose(name).replace(sparse_order=order)
    d = dense_of(p)
    k = k_of(p)
    for a, b, c, _ in rows(p, 60, k, name + order):
        assert dot_bits(p, a, b, c, mask=[1] * k) == dot_bits(d, a, b, c)


@pytest.mark.parametrize("name", SPARSE)
def test_logical_reading_is_the_dense_model_on_zeroed_operands(name):
    """A disabled position reads as +0 on both sides: a NaN or infinity
    there has no effect (as sf-tensor's B200 vectors show)."""
    p = choose(name).replace(sparse_order="logical")
    d = dense_of(p)
    k = k_of(p)
    for a, b, c, m in rows(p, 60, k, "zeroed" + name):
        za = [x if s else 0 for x, s in zip(a, m)]
        zb = [y if s else 0 for y, s in zip(b, m)]
        assert dot_bits(p, a, b, c, mask=m) == dot_bits(d, za, zb, c)


@pytest.mark.parametrize("name", SPARSE)
def test_compressed_reading_is_the_dense_model_on_the_selected_products(name):
    p = choose(name).replace(sparse_order="compressed")
    d = dense_of(p)
    k = k_of(p)
    for a, b, c, m in rows(p, 60, k, "packed" + name):
        pa = [x for x, s in zip(a, m) if s]
        pb = [y for y, s in zip(b, m) if s]
        assert dot_bits(p, a, b, c, mask=m) == dot_bits(d, pa, pb, c)


def test_the_readings_differ_on_float_models_and_agree_on_integer_ones():
    """Not vacuous: on Ampere fp16 the two readings disagree on some rows
    (blocks of 8 logical positions against blocks of 8 selected products);
    an integer sum is exact, so they agree there."""
    p = choose("ampere-fp16-fp32-sparse")
    q = p.replace(sparse_order="compressed")
    pts = rows(p, 300, 32, "differ")
    assert sum(dot_bits(p, a, b, c, mask=m) != dot_bits(q, a, b, c, mask=m) for a, b, c, m in pts) >= 3
    s = choose("ampere-s8-s32-sparse")
    t = s.replace(sparse_order="compressed")
    for a, b, c, m in rows(s, 40, 64, "agree"):
        assert dot_bits(s, a, b, c, mask=m) == dot_bits(t, a, b, c, mask=m)


@pytest.mark.parametrize("order", READINGS)
@pytest.mark.parametrize("name", ["ampere-fp16-fp32-sparse", "ampere-tf32-fp32-sparse",
                                  "ampere-s8-s32-sparse"])
def test_numpy_rows_equal_python_ints(name, order):
    p = choose(name).replace(sparse_order=order)
    k = k_of(p)
    pts = rows(p, 80, k, "batch" + name)
    pts += [(a, b, c, [1] * k) for a, b, c, _ in pts[:10]]
    a = np.array([x[0] for x in pts], dtype=np.uint64)
    b = np.array([x[1] for x in pts], dtype=np.uint64)
    c = np.array([x[2] for x in pts], dtype=np.uint64)
    m = np.array([x[3] for x in pts], dtype=np.uint64)
    got = dot_batch(p, a, b, c, mask_bits=m)
    assert [int(x) for x in got] == [dot_bits(p, *x[:3], mask=x[3]) for x in pts]


@pytest.mark.parametrize("order", READINGS)
def test_the_solver_evaluates_the_formula_as_python_ints(order):
    if not service.installed("bitwuzla"):
        pytest.skip("bitwuzla is not installed")
    p = choose("ampere-fp16-fp32-sparse").replace(sparse_order=order)
    k = 16
    pts = rows(p, 10, k, "smt" + order)

    def build(I):
        a = [I.var(f"a{i}", p.fin.bits) for i in range(k)]
        b = [I.var(f"b{i}", p.fb.bits) for i in range(k)]
        m = [I.var(f"m{i}", 1) for i in range(k)]
        return datapath.dot(I, p, a, b, I.var("c", p.fc.bits), mask=m)

    named = [{**{f"a{i}": x for i, x in enumerate(a)}, **{f"b{i}": y for i, y in enumerate(b)},
              **{f"m{i}": s for i, s in enumerate(m)}, "c": c} for a, b, c, m in pts]
    answer = service.solve(evaluation_formula(build, named), "bitwuzla", timeout=120)
    assert answer.status == "sat"
    for j, (a, b, c, m) in enumerate(pts):
        assert answer.values[f"out{j}"] == dot_bits(p, a, b, c, mask=m)


def test_sparse_order_property_separates_the_readings():
    doc = run_named("sparse-order", "ampere", timeout=60, command="test")
    assert doc["verdict"] == "sat"
    ids = [h["id"] for h in doc["hypotheses"]]
    assert ids == ["logical", "compressed", "logical, c after", "compressed, c after"]
    separated = {tuple(s) for v in doc["vectors"] for s in v["separates"]}
    assert len(separated) == 6
    p = choose("ampere-fp16-fp32-sparse")
    for v in doc["vectors"]:             # every mask is one the metadata can spell
        assert len(v["mask"]) == 16 and all(sum(v["mask"][g:g + 4]) == 2 for g in range(0, 16, 4))
        a = [int(x["hex"], 16) for x in v["a"]]
        b = [int(x["hex"], 16) for x in v["b"]]
        assert v["outputs"]["logical"]["hex"] == dot("ampere-fp16-fp32-sparse", a, b,
                                                     int(v["c"]["hex"], 16), mask=v["mask"]).hex
    assert p.sparse_order == "logical"


def test_the_property_does_not_apply_to_dense_or_integer_models():
    with pytest.raises(UserError, match="sparse"):
        run_named("sparse-order", "ampere-fp16-fp32")
    with pytest.raises(UserError, match="integer"):
        run_named("sparse-order", "ampere-s8-s32-sparse")


def test_masks_are_checked():
    p = choose("ampere-fp16-fp32-sparse")
    with pytest.raises(UserError, match="mask"):
        dot(p, [0x3c00] * 4, [0x3c00] * 4, 0)
    with pytest.raises(UserError, match="4 bits"):
        dot(p, [0x3c00] * 4, [0x3c00] * 4, 0, mask=[1, 0, 1])
    with pytest.raises(UserError, match="dense"):
        dot("ampere", [0x3c00] * 4, [0x3c00] * 4, 0, mask=[1, 1, 0, 0])
    with pytest.raises(UserError, match="mask"):
        dot_batch(p, np.zeros((2, 4), np.uint64), np.zeros((2, 4), np.uint64), np.zeros(2, np.uint64))
    with pytest.raises(ModelFileError, match="sparsity"):
        choose("blackwell-nvfp4").replace(sparsity="2:4")
    with pytest.raises(UserError, match="dense A"):
        matmul(np.ones((2, 8), np.float16), np.ones((8, 2), np.float16), np.zeros((2, 2), np.float32),
               model=p)


def test_sparse_probe_observations_check_against_the_sparse_model(tmp_path):
    """A probe's vectors with masks, run through a model as a device would
    (simulated observations), read back by tcsmt check: the architecture
    stands for its sparse model, which matches every row; the other
    reading does not."""
    import json

    from tcsmt.api import check
    from tcsmt.instructions.table import instruction_by_name
    from tcsmt.observed.vectors import random_vectors
    from tcsmt.probes.harness import simulated_observations
    ins = instruction_by_name("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32")
    data = random_vectors(ins.formats(), 32, 40, 11, sparsity="2:4")
    vectors = tmp_path / "v.json"
    vectors.write_text(json.dumps(data))
    obs = tmp_path / "obs.json"
    obs.write_text(json.dumps(simulated_observations(vectors, "ampere-fp16-fp32-sparse")))
    report = check(str(obs), ["ampere"])
    [row] = report["models"]
    assert row["model"] == "ampere-fp16-fp32-sparse" and row["matched"] == 40
    other = check(str(obs), ["ampere-fp16-fp32-sparse"], overrides=["sparse_order=compressed"])
    assert other["models"][0]["matched"] < 40
