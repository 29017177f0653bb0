"""tcsmt.quant: rounding into every format against the exact Fraction
rounding of tcsmt.model.formats, the MX and NVFP4 quantisers bit for bit
against torchao's (tests/torchao_ref.py) on random and edge tensors, and
the edge cases of the OCP MX v1.0 specification and NVIDIA's recipe by hand."""

from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))

from torchao_ref import MAX_ELEMENT, mx_bits, nvfp4_bits, tensors  # noqa: E402

import tcsmt.quant as tq  # noqa: E402
from tcsmt.errors import FormatMismatch, UserError  # noqa: E402
from tcsmt.model.choose import choose  # noqa: E402
from tcsmt.model.formats import get_format  # noqa: E402
from tcsmt.sim.npio import dtype_of, to_bits  # noqa: E402

SCALINGS = ("floor", "ceil", "even", "rceil")


def _values(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    spread = rng.standard_normal(2000) * np.exp2(rng.integers(-150, 130, 2000))
    picked = [0.0, -0.0, 3.4e38, -3.4e38, 1e-45, 2.0 ** -136, 2.0 ** -137, 3 * 2.0 ** -138,
              2.0 ** 128 * (1 - 2.0 ** -12), 6.5, 7.0, -7.0, 5.0, 0.25, 0.125, 0.0625, -0.0625,
              0.75, 1.25, 2.5, 448.0, 464.0, 480.0, 57344.0, 61440.0]
    return np.concatenate([spread, picked])


@pytest.mark.parametrize("name", ["tf32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2",
                                  "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn"])
@pytest.mark.parametrize("mode", ["rne", "rz", "ru", "rd"])
def test_round_to_equals_the_exact_rounding_of_every_value(name, mode):
    fmt, x = get_format(name), _values(1)
    with np.errstate(all="ignore"):
        got = to_bits(tq.round_to(x, name, mode), fmt, "x")
    want = [fmt.round_value(Fraction(float(v)), mode, int(np.signbit(v))) for v in x]
    bad = [(v, fmt.hex(int(g)), fmt.hex(w)) for v, g, w in zip(x, got, want) if int(g) != w]
    assert not bad, bad[:5]


def test_round_to_keeps_nan_and_infinity_where_the_format_has_them():
    x = np.array([np.nan, np.inf, -np.inf])
    assert np.isnan(tq.round_to(x, "tf32", "rz")[0]) and tq.round_to(x, "tf32", "rz")[1] == np.inf
    assert list(tq.round_to(x[1:], "e2m1", "rne").astype(np.float32)) == [6.0, -6.0]
    with pytest.raises(UserError, match="unknown rounding"):
        tq.round_to(x, "fp16", "nearest")


@pytest.mark.parametrize("elem", list(MAX_ELEMENT))
@pytest.mark.parametrize("seed", [0, 1])
def test_mx_equals_torchao_bit_for_bit(elem, seed):
    for label, x in tensors(seed).items():
        for scaling in SCALINGS:
            want_s, want_e = mx_bits(torch.from_numpy(x), elem, 32, scaling)
            q = tq.quantize(x, f"mx-{scaling}", elem, 32)
            assert np.array_equal(q.scales.view(np.uint8), want_s), (label, scaling)
            assert np.array_equal(q.elements.view(np.uint8), want_e), (label, scaling)


def test_mx_with_blocks_of_16_equals_torchao():
    """kind::mxf4nvf4 with ue8m0 scales per 16 (blackwell-mxf4nvf4-b16)."""
    for label, x in tensors(2).items():
        for scaling in SCALINGS:
            want_s, want_e = mx_bits(torch.from_numpy(x), "e2m1", 16, scaling)
            q = tq.quantize(x, f"mx-{scaling}", "e2m1", 16)
            assert np.array_equal(q.scales.view(np.uint8), want_s), (label, scaling)
            assert np.array_equal(q.elements.view(np.uint8), want_e), (label, scaling)


@pytest.mark.parametrize("pts", [None, "dynamic", 0.01, 3e-5])
@pytest.mark.parametrize("seed", [0, 1])
def test_nvfp4_equals_torchao_bit_for_bit(pts, seed):
    for label, x in tensors(seed).items():
        want_s, want_e, want_pts = nvfp4_bits(torch.from_numpy(x), pts)
        q = tq.quantize(x, "nvfp4-block" if pts is None else "nvfp4", per_tensor_scale=pts)
        assert np.array_equal(q.scales.view(np.uint8), want_s), label
        assert np.array_equal(q.elements.view(np.uint8), want_e), label
        if pts is not None:
            assert np.float32(q.per_tensor_scale).tobytes() == want_pts.numpy().tobytes(), label


def test_bfloat16_and_three_dimensional_inputs_equal_torchao():
    x = torch.randn(3, 8, 64, generator=torch.Generator().manual_seed(7)).to(torch.bfloat16)
    xn = x.float().numpy().astype(ml_dtypes.bfloat16)
    for elem in ("e4m3", "e2m1"):
        want_s, want_e = mx_bits(x, elem, 32, "floor")
        q = tq.quantize(xn, "mx-floor", elem)
        assert np.array_equal(q.scales.view(np.uint8), want_s)
        assert np.array_equal(q.elements.view(np.uint8), want_e)
    want_s, want_e, _ = nvfp4_bits(x, "dynamic")
    q = tq.quantize(xn, "nvfp4")                 # torchao flattens the scales of a 3-D input
    assert np.array_equal(q.scales.view(np.uint8).ravel(), want_s.ravel())
    assert np.array_equal(q.elements.view(np.uint8).ravel(), want_e.ravel())


def test_rceil_exact_takes_the_exact_ceiling_where_float32_log2_rounds_down():
    x = tensors(0)["near-powers"]
    for elem, top in MAX_ELEMENT.items():
        q = tq.quantize(x, "mx-rceil-exact", elem)
        descale = np.max(np.abs(x), axis=1) / np.float32(top)
        m, e = np.frexp(descale.astype(np.float64))
        want = np.clip(np.where(m == 0.5, e - 1, e), -127, 127) + 127
        assert np.array_equal(q.scales.view(np.uint8)[:, 0].astype(np.int64), want), elem
        differ = q.scales.view(np.uint8) != tq.quantize(x, "mx-rceil", elem).scales.view(np.uint8)
        assert differ.any(), elem          # the inputs do reach the float32 log2 rounding


# ---------------------------------------------------------------------------
# The specification's edge cases, by hand
# ---------------------------------------------------------------------------

def _f32(q):
    return q.elements.astype(np.float32), q.scales.astype(np.float32)


def test_an_all_zero_block_has_zero_elements_and_the_smallest_scale():
    x = np.zeros((2, 32), np.float32)
    x[1] = -0.0
    e, s = _f32(tq.quantize(x, "mx-floor", "e4m3"))
    assert (e == 0).all() and list(np.signbit(e[:, 0])) == [False, True]
    assert (s == 2.0 ** -127).all()                      # ue8m0 0x00
    e, s = _f32(tq.quantize(x, "nvfp4-block"))
    assert (e == 0).all() and (s == 2.0 ** -6).all()     # torchao's clamp at e4m3's smallest normal


def test_a_nan_makes_its_block_scale_nan_and_leaves_the_others():
    x = np.ones((1, 64), np.float32)
    x[0, 3] = np.nan
    for elem in MAX_ELEMENT:
        q = tq.quantize(x, "mx-floor", elem)
        assert list(q.scales.view(np.uint8)[0]) == [0xFF, 127 - get_format(elem).emax]
    q = tq.quantize(x, "nvfp4-block")
    s = q.scales.astype(np.float32)[0]
    assert np.isnan(s[0]) and not np.isnan(s[1:]).any()


def test_infinities_saturate_to_the_largest_element():
    x = np.full((1, 32), 0.5, np.float32)
    x[0, 0], x[0, 1] = np.inf, -np.inf
    for elem, top in MAX_ELEMENT.items():
        e, s = _f32(tq.quantize(x, "mx-floor", elem))
        assert e[0, 0] == top and e[0, 1] == -top and np.isfinite(s).all()
    e, s = _f32(tq.quantize(x, "nvfp4-block"))
    assert s[0, 0] == 448.0 and list(e[0, :2]) == [6.0, -6.0]


def test_floor_saturates_a_block_whose_amax_passes_the_largest_element():
    x = np.zeros((1, 32), np.float32)
    x[0, :3] = [480.0, 7.0, 1.0]          # floor(log2 480) = 8 = e4m3's emax: scale 1
    e, s = _f32(tq.quantize(x, "mx-floor", "e4m3"))
    assert s[0, 0] == 1.0 and list(e[0, :3]) == [448.0, 7.0, 1.0]
    e, s = _f32(tq.quantize(x, "mx-ceil", "e4m3"))    # ceil: scale 2, nothing clamped
    assert s[0, 0] == 2.0 and list(e[0, :3]) == [240.0, 3.5, 0.5]
    x[0, :3] = [7.0, 0.75, 0.25]          # e2m1: scale 1, 7 saturates at 6, ties go to even
    e, s = _f32(tq.quantize(x, "mx-floor", "e2m1"))
    assert s[0, 0] == 1.0 and list(e[0, :3]) == [6.0, 1.0, 0.0]


def test_subnormal_elements_and_the_smallest_scales():
    x = np.zeros((1, 32), np.float32)
    x[0, :2] = [4.0, 0.125]               # scale 1; e2m1's only subnormal is 0.5
    e, s = _f32(tq.quantize(x, "mx-floor", "e2m1"))
    assert s[0, 0] == 1.0 and list(e[0, :2]) == [4.0, 0.0]     # 0.125: below half of 0.5
    x[0, 1] = 0.25
    e, _ = _f32(tq.quantize(x, "mx-floor", "e2m1"))
    assert e[0, 1] == 0.0                  # 0.25 is the tie between 0 and 0.5: to even
    x[0, 1] = 0.3
    assert _f32(tq.quantize(x, "mx-floor", "e2m1"))[0][0, 1] == 0.5
    # the smallest ue8m0 scale: torchao divides by 2^-126 where the scale says 2^-127
    tiny = np.zeros((1, 32), np.float32)
    tiny[0, 0] = 2.0 ** -125              # floor(log2) - 2 = -127
    e, s = _f32(tq.quantize(tiny, "mx-floor", "e2m1"))
    assert s[0, 0] == 2.0 ** -127 and e[0, 0] == 2.0    # the value it stands for: 2^-126
    # NVFP4: a block scale below e4m3's smallest normal is clamped to it
    small = np.full((1, 16), 6 * 2.0 ** -8, np.float32)
    e, s = _f32(tq.quantize(small, "nvfp4-block"))
    assert s[0, 0] == 2.0 ** -6 and (e == 1.5).all()


def test_values_the_format_holds_come_back_exactly():
    rng = np.random.default_rng(3)
    for elem in MAX_ELEMENT:
        fmt = get_format(elem)
        codes = rng.integers(0, 1 << fmt.bits, (4, 64)).astype(np.uint8)
        if fmt.has_nan:
            codes[(codes & 0x7F) == 0x7F] = 0                 # no NaN in the input
        if fmt.has_inf:
            codes[(codes & 0x7C) == 0x7C] = 0
        vals = codes.view(dtype_of(fmt)).astype(np.float32)
        vals[:, 0] = float(fmt.max_finite())                   # amax decides the scale: 1
        q = tq.quantize(vals * np.float32(2.0 ** -20), "mx-floor", elem)
        assert np.array_equal(q.dequantize(), vals * np.float32(2.0 ** -20)), elem


def test_a_partial_last_block_is_quantised_as_if_padded_with_zeros():
    x = np.random.default_rng(4).standard_normal((3, 40)).astype(np.float32)
    padded = np.concatenate([x, np.zeros((3, 24), np.float32)], axis=1)
    for recipe in ("mx-floor", "nvfp4"):
        q, qp = tq.quantize(x, recipe, "e2m1"), tq.quantize(padded, recipe, "e2m1")
        assert q.scales.shape[-1] == (2 if recipe == "mx-floor" else 3)
        assert np.array_equal(q.elements.view(np.uint8), qp.elements.view(np.uint8)[:, :40])
        assert np.array_equal(q.scales.view(np.uint8), qp.scales.view(np.uint8)[:, :q.scales.shape[1]])


# ---------------------------------------------------------------------------
# Models: their recipes, their operands and their dtypes
# ---------------------------------------------------------------------------

def test_each_block_scaled_model_has_the_recipe_its_instruction_expects():
    assert tq.default_recipe(choose("blackwell-nvfp4")) == "nvfp4"
    assert tq.default_recipe(choose("blackwell-mxf4")) == "mx-floor"
    assert tq.default_recipe(choose("blackwell-mxf8f6f4-e5m2")) == "mx-floor"
    with pytest.raises(FormatMismatch, match="no block scales"):
        tq.default_recipe(choose("hopper-fp16-fp32"))
    with pytest.raises(FormatMismatch, match="ue4m3"):
        tq.recipe_for(choose("blackwell-mxf4"), "nvfp4")
    with pytest.raises(UserError, match="unknown recipe"):
        tq.recipe_for(choose("blackwell-mxf4"), "mx-nearest")


def test_operands_are_quantised_along_k_in_the_models_formats():
    p = choose("blackwell-mxf8f6f4-e4m3-e2m1")
    rng = np.random.default_rng(5)
    A, B = rng.standard_normal((4, 64)), rng.standard_normal((64, 3))
    qa, qb = tq.quantize_for(p, A, "a"), tq.quantize_for(p, B, "b")
    assert qa.elements.dtype == ml_dtypes.float8_e4m3fn and qb.elements.dtype == ml_dtypes.float4_e2m1fn
    assert qa.scales.shape == (4, 2) and qb.scales.shape == (2, 3)
    assert np.array_equal(qb.elements.view(np.uint8),
                          tq.quantize(B.T, "mx-floor", "e2m1").elements.view(np.uint8).T)


def test_dtypes_of_every_models_formats():
    for p in (choose(n) for n in ("blackwell-nvfp4", "blackwell-mxf8f6f4-e3m2", "hopper-tf32-fp32")):
        d = tq.dtypes(p)
        assert set(d) == {"a", "b", "c", "d", "scale"}
    d = tq.dtypes(choose("blackwell-nvfp4"))
    assert d["a"] == ml_dtypes.float4_e2m1fn and d["scale"] == ml_dtypes.float8_e4m3fn
    assert d["d"] == np.float32 and tq.dtypes(choose("hopper-fp16-fp32"))["scale"] is None


def test_the_package_doc_example_runs():
    import doctest

    import tcsmt.quant
    assert doctest.testmod(tcsmt.quant).failed == 0
