"""The named reference models (exact, fma-chain, fma-pairwise) against the exact
Fraction reference of tests/reference.py, written apart from the datapath,
and their use wherever a model is taken (catalogue, matmul, check, diff)."""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest
import reference as R
from cli_run import run

import tcsmt
from tcsmt.errors import UserError
from tcsmt.model.choose import choose
from tcsmt.model.formats import Format, get_format
from tcsmt.sim.dot import dot_bits

PAIRS = [("float16", "float32"), ("bfloat16", "float32"), ("float16", "float16"),
         ("float8_e4m3fn", "float32"), ("tf32", "float32")]


def draw(rng: random.Random, fmt: Format, special: float = 0.1) -> int:
    """A random finite pattern: often a subnormal, zero or power of two."""
    r = rng.random()
    if r < special:
        return 0 if rng.random() < 0.5 else 1 << (fmt.bits - 1)          # +-0
    if r < 2 * special:
        return rng.getrandbits(1) << (fmt.bits - 1) | rng.randrange(1, 1 << fmt.frac_bits)
    while True:
        x = rng.getrandbits(fmt.bits)
        if fmt.classify(x) not in ("nan", "inf"):
            return x


def pairwise_reference(a, b, c, fin: Format, fc: Format, fout: Format) -> int:
    """The products summed as a tree of pairs, then c; every addition
    rounded to nearest even into fout (one block: k <= 256)."""
    level = [R.mul(R.decode(fin, x), R.decode(fin, y)) for x, y in zip(a, b)]
    while len(level) > 1:
        level = [R.round_to(fout, R.add(level[i], level[i + 1], "rne"), "rne")
                 if i + 1 < len(level) else level[i] for i in range(0, len(level), 2)]
    acc = R.round_to(fout, R.decode(fc, c), "rne")
    return R.encode(fout, R.round_to(fout, R.add(acc, level[0], "rne"), "rne"))


WIDE = Format("exact", 15, 700)       # holds every partial sum of these tests exactly


@pytest.mark.parametrize("fin,fout", PAIRS)
def test_exact_is_the_exact_sum_rounded_once(fin, fout):
    p = choose("exact", f"{fin}:{fout}")
    assert (p.block_size, p.align_rounding, p.final_rounding) == (256, "exact", "rne")
    rng = random.Random(f"exact {fin} {fout}")
    for _ in range(100):
        k = rng.choice([1, 2, 3, 5, 8, 16])
        a = [draw(rng, p.fin) for _ in range(k)]
        b = [draw(rng, p.fin) for _ in range(k)]
        c = draw(rng, p.fc)
        want = R.dot(a, b, c, in_fmt=p.fin, c_fmt=p.fc, acc_fmt=WIDE, out_fmt=p.fout,
                     mode="rne", block_size=256)
        assert dot_bits(p, a, b, c) == want, (a, b, c)


@pytest.mark.parametrize("fin,fout", PAIRS)
def test_fma_chain_is_the_ieee_fma_chain(fin, fout):
    p = choose("fma-chain", f"{fin}:{fout}")
    assert (p.block_size, p.normalisation, p.acc_format) == (1, "every_add", fout)
    rng = random.Random(f"chain {fin} {fout}")
    for _ in range(150):
        k = rng.choice([1, 2, 3, 5, 8, 16])
        a = [draw(rng, p.fin) for _ in range(k)]
        b = [draw(rng, p.fin) for _ in range(k)]
        c = draw(rng, p.fc)
        want = R.dot(a, b, c, in_fmt=p.fin, c_fmt=p.fc, acc_fmt=p.fout, out_fmt=p.fout,
                     mode="rne", block_size=1)
        assert dot_bits(p, a, b, c) == want, (a, b, c)


@pytest.mark.parametrize("fin,fout", PAIRS)
def test_fma_pairwise_is_a_tree_of_rounded_pair_sums(fin, fout):
    p = choose("fma-pairwise", f"{fin}:{fout}")
    rng = random.Random(f"pairwise {fin} {fout}")
    for _ in range(150):
        k = rng.choice([1, 2, 3, 4, 7, 16])
        a = [draw(rng, p.fin) for _ in range(k)]
        b = [draw(rng, p.fin) for _ in range(k)]
        c = draw(rng, p.fc)
        assert dot_bits(p, a, b, c) == pairwise_reference(a, b, c, p.fin, p.fc, p.fout), (a, b, c)


def test_references_differ_where_they_should():
    """1 + 2^-24 + 2^-24 in binary32: the chain loses both halves (ties to
    even), a pairwise sum of the two small products keeps them."""
    f16, f32 = get_format("float16"), get_format("float32")
    tiny = f16.round_value(Fraction(1, 2 ** 12))                    # tiny * tiny = 2^-24
    a, b, c = [tiny, tiny], [tiny, tiny], f32.round_value(Fraction(1))
    chain = dot_bits(choose("fma-chain"), a, b, c)
    pairwise = dot_bits(choose("fma-pairwise"), a, b, c)
    assert f32.value(chain) == 1 and f32.value(pairwise) == 1 + Fraction(1, 2 ** 23)


def test_exact_rounds_once_where_the_others_round_twice():
    """1 + 2^-24 + 2^-48 in binary32: above the midpoint between 1 and
    1 + 2^-23, so rounded once it is 1 + 2^-23; the chain and the tree
    first round 2^-24 + 2^-48 or 1 + 2^-24 to a tie and end on 1."""
    f16, f32 = get_format("float16"), get_format("float32")
    h, t = f16.round_value(Fraction(1, 2 ** 12)), f16.round_value(Fraction(1, 2 ** 24))
    a, b, c = [h, t], [h, t], f32.round_value(Fraction(1))
    got = {name: f32.value(dot_bits(choose(name), a, b, c))
           for name in ("exact", "fma-chain", "fma-pairwise")}
    assert got == {"exact": 1 + Fraction(1, 2 ** 23), "fma-chain": 1, "fma-pairwise": 1}
    r = run(["check", "results/hardware/H100/mma-f16-f32.json", "--arch", "exact",
             "--limit", "100", "--show", "0"])
    assert "exact-fp16-fp32 (for exact):" in r.output


def test_references_wherever_a_model_is():
    A = np.random.default_rng(0).standard_normal((4, 40)).astype(np.float16)
    B = np.random.default_rng(1).standard_normal((40, 3)).astype(np.float16)
    C = np.zeros((4, 3), np.float32)
    D = tcsmt.matmul(A, B, C, model="fma-chain")
    chain = choose("fma-chain", "fp16:fp32")
    ref = np.array([[R.dot([int(x) for x in A[i].view(np.uint16)], [int(y) for y in B[:, j].view(np.uint16)],
                           0, in_fmt=chain.fin, c_fmt=chain.fc, acc_fmt=chain.facc, out_fmt=chain.fout,
                           mode="rne", block_size=1) for j in range(3)] for i in range(4)], dtype=np.uint32)
    assert (D.view(np.uint32) == ref).all()
    r = run(["check", "results/hardware/H100/mma-f16-f32.json", "--arch", "hopper",
             "--arch", "fma-chain", "--limit", "100", "--show", "0"])
    assert "fma-chain-fp16-fp32 (for fma-chain):" in r.output and "100/100" in r.output
    assert choose("fma-pairwise", "e4m3:fp16").fc.name == "float16"


def test_diff_takes_the_other_models_formats():
    from tcsmt.api import comparison
    a, b = comparison("hopper-bf16-fp32", "fma-chain")
    assert b.params.fin.name == "bfloat16" and b.params.name == "fma-chain-bf16-fp32"


def test_unknown_formats_are_one_line_errors():
    with pytest.raises(UserError, match="unknown format"):
        choose("fma-chain", "fp17:fp32")
