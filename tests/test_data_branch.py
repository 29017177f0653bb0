"""The datapath never branches on data with a Python ``if``.

The model is one definition read by several interpretations; a Python
``if`` on a word or a Bool would work for concrete ints but not for SMT
terms or NumPy arrays. The Python-int interpretation's words and Bools
refuse ``bool()``, so such a branch raises DataBranchError at once. These
tests show that the refusal catches the usual ways of writing a data branch
in a stage, and that the whole datapath runs for every shipped model, every
value of every choice parameter, and its trace path, without raising.
"""

from __future__ import annotations

import random

import pytest
from model_sample import MODELS, mask_for, scales_for

from tcsmt import all_models, datapath, model
from tcsmt.datapath import bv
from tcsmt.errors import ModelFileError
from tcsmt.interp.ints import INT, DataBranchError
from tcsmt.model.choices import CHOICES
from tcsmt.sim.dot import dot_bits, explain

I = INT


# ---------------------------------------------------------------------------
# Stages written the wrong way are caught
# ---------------------------------------------------------------------------

def larger_with_if(I, x, y):
    """A stage that picks the larger word with a Python if: wrong."""
    if I.ult(x, y):
        return y
    return x


def larger_with_ite(I, x, y):
    """The same stage written with ite: right."""
    return I.ite(I.ult(x, y), y, x)


def round_up_with_and(I, guard, sticky, x):
    """A rounding step that combines Bools with Python's `and`: wrong."""
    inc = guard and sticky
    return I.add(x, I.const(1, I.width(x))) if inc else x


def normalise_with_while(I, x):
    """A normalisation loop that tests the data: wrong."""
    n = 0
    while bv.is_zero(I, I.extract(x, I.width(x) - 1, I.width(x) - 1)):
        x = I.shl(x, I.const(1, I.width(x)))
        n += 1
    return x, n


def sign_with_conditional_expression(I, x):
    return I.neg(x) if bv.msb(I, x) else x


def zero_test_on_a_word(I, x):
    return I.const(1, 1) if x else I.const(0, 1)


def flag_with_not(I, nan):
    return not nan


WRONG_STAGES = [
    ("if on a comparison", lambda: larger_with_if(I, I.const(3, 4), I.const(5, 4))),
    ("and on two Bools",
     lambda: round_up_with_and(I, I.bool_const(True), I.bool_const(False), I.const(2, 4))),
    ("while on data", lambda: normalise_with_while(I, I.const(1, 4))),
    ("conditional expression", lambda: sign_with_conditional_expression(I, I.const(9, 4))),
    ("if on a word", lambda: zero_test_on_a_word(I, I.const(0, 4))),
    ("not on a Bool", lambda: flag_with_not(I, I.bool_const(False))),
    ("assert on data", lambda: exec("assert I.eq(x, x)", {"I": I, "x": I.const(1, 3)})),
]


@pytest.mark.parametrize("name,run", WRONG_STAGES, ids=[w[0] for w in WRONG_STAGES])
def test_data_branch_is_caught(name, run):
    with pytest.raises(DataBranchError):
        run()


def test_python_comparison_of_words_is_refused():
    """Words have no Python order or equality either."""
    x, y = I.const(3, 4), I.const(5, 4)
    with pytest.raises(DataBranchError):
        _ = x == y
    with pytest.raises(TypeError):
        _ = max(x, y)


def test_the_ite_version_runs_and_is_right():
    for x in range(16):
        for y in range(16):
            r = larger_with_ite(I, I.const(x, 4), I.const(y, 4))
            assert I.value(r) == max(x, y)


# ---------------------------------------------------------------------------
# The whole datapath under the Python-int interpretation
# ---------------------------------------------------------------------------

def special_inputs(fmt) -> list[int]:
    if fmt.is_integer:              # zero, one, minus one, both ends of the range
        return sorted({0, 1, fmt.encode(fmt.lowest), fmt.encode(fmt.highest),
                       fmt.encode(-1 if fmt.signed else 2)})
    out = [0, fmt.pack(1, 0, 0), 1, fmt.pack(1, 0, 1), fmt.pack(0, fmt.bias, 0),
           fmt.max_finite_bits(0), fmt.max_finite_bits(1), fmt.pack(0, 1, 0)]
    if fmt.has_nan:
        out.append(fmt.nan_bits())
    if fmt.has_inf:
        out += [fmt.inf_bits(0), fmt.inf_bits(1)]
    return out


def run_model(p, rng: random.Random, samples: int = 6) -> None:
    """Run the datapath on specials and random inputs, one block, a bit
    more than one block, and more than two; every result is a word of
    out_format's width."""
    fin, fb, fc = p.fin, p.fb, p.fc
    specials_a, specials_b, specials_c = special_inputs(fin), special_inputs(fb), special_inputs(fc)
    for k in sorted({1, p.block_size, p.block_size + 1, 2 * p.block_size + 1}):
        for i in range(samples):
            if i < 2:
                a = [rng.choice(specials_a) for _ in range(k)]
                b = [rng.choice(specials_b) for _ in range(k)]
                c = rng.choice(specials_c)
            else:
                a = [rng.getrandbits(fin.bits) for _ in range(k)]
                b = [rng.getrandbits(fb.bits) for _ in range(k)]
                c = rng.getrandbits(fc.bits)
            d = dot_bits(p, a, b, c, *scales_for(p, k, rng), mask=mask_for(p, k, rng))
            assert isinstance(d, int) and 0 <= d < (1 << p.fout.bits), (p.name, d)


@pytest.mark.parametrize("p", all_models(), ids=lambda m: m.name)
def test_every_shipped_model_runs_without_a_data_branch(p):
    """Every shipped model (about 0.05 s each), not only the sample."""
    run_model(p, random.Random(p.name))


@pytest.mark.parametrize("p", MODELS, ids=lambda m: m.name)
def test_every_shipped_model_runs_its_trace_path(p):
    """The --explain path (the datapath with a trace list) too."""
    rng = random.Random("trace" + p.name)
    k = p.block_size + 1
    a = [rng.getrandbits(p.fin.bits) for _ in range(k)]
    b = [rng.getrandbits(p.fb.bits) for _ in range(k)]
    c = rng.getrandbits(p.fc.bits)
    sa, sb = scales_for(p, k, rng)
    m = mask_for(p, k, rng)
    scales = {} if sa is None else {"sa": [I.const(x, p.fscale.bits) for x in sa],
                                    "sb": [I.const(y, p.fscale.bits) for y in sb]}
    trace: list = []
    d = datapath.dot(I, p, [I.const(x, p.fin.bits) for x in a], [I.const(y, p.fb.bits) for y in b],
                     I.const(c, p.fc.bits), trace=trace, **scales,
                     mask=None if m is None else [I.const(x, 1) for x in m])
    assert I.value(d) == dot_bits(p, a, b, c, sa, sb, m)
    assert trace
    assert explain(p, a, b, c, sa, sb, m)[-1][0] == ("result" if p.fout.is_integer else "rounded")


# Parameters a value needs before it validates on a block model
NEEDS = {
    ("c_placement", "late"): {"late_frac_bits": 31},
    ("saturation", "every_add"): {"overflow": "saturate"},
    ("sparse_order", "compressed"): {"sparsity": "2:4"},
}
INTEGER_CHOICES = {("overflow", "wrap"), ("overflow", "saturate"), ("saturation", "every_add")}
"""Values taken on an integer model (Ampere s8)."""


def choice_cases():
    for key, values in CHOICES.items():
        for v in values:
            yield key, v


@pytest.mark.parametrize("key,value", list(choice_cases()), ids=lambda x: str(x))
def test_every_choice_of_every_parameter_runs_without_a_data_branch(key, value):
    """Each value of each choice parameter, on a block model (Ampere fp16)
    and, for the every_add paths, with normalisation = every_add."""
    integer = (key, value) in INTEGER_CHOICES
    base = model("ampere-s8-s32" if integer else "ampere-fp16-fp32")
    changes = {key: value, **NEEDS.get((key, value), {})}
    try:
        p = base.replace(**changes)
    except ModelFileError as e:           # pragma: no cover - a new constraint
        pytest.fail(f"{key}={value} does not validate on {base.name}: {e}")
    rng = random.Random(f"{key}={value}")
    run_model(p, rng, samples=3)
    # an exact sum is one per block; RDNA's adder (ones, floor) is one block sum too
    every_add = (key, value) not in {("align_rounding", "exact"), ("align_rounding", "ones"),
                                     ("align_rounding", "floor")}
    if every_add and not integer and key in ("add_order", "align_rounding", "zero_sign", "overflow",
                                             "product_alignment"):
        q = p.replace(normalisation="every_add", carry_bits=None, c_placement="global")
        run_model(q, rng, samples=3)
