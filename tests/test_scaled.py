"""Mixed input formats, block scales and exact groups in the datapath.

The models here are built from a shipped one with ``replace`` so that the
datapath's new stages are checked on their own: the scalar interpreter
against an exact Fraction computation where the window is wide enough to
keep every bit, the batch interpreter (both engines) and the SMT terms
against the scalar one, NaN and zero scales, and the parameters' checks.
"""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest

from tcsmt import datapath
from tcsmt.errors import ModelFileError, UserError
from tcsmt.model.choose import choose
from tcsmt.model.formats import get_format
from tcsmt.sim.batch import dot_batch
from tcsmt.sim.dot import dot, dot_bits, explain
from tcsmt.smt.terms import SmtInterp, evaluate

BASE = choose("blackwell-e4m3-fp32")
MXF4 = BASE.replace(name="t-mxf4", in_format="e2m1", scale_format="ue8m0", scale_block=32,
                    group_size=16, block_size=64, align_bits=12, min_exponent=-139)
NVF4 = MXF4.replace(name="t-nvf4", scale_format="ue4m3", scale_block=16)
MIXED = BASE.replace(name="t-mx", in_format="e4m3", b_format="e5m2", scale_format="ue8m0",
                     scale_block=32)
WIDE = MIXED.replace(name="t-wide", align_bits=64, min_exponent=None)
MODELS = [MXF4, NVF4, MIXED, BASE.replace(name="t-e3m2xe2m1", in_format="e3m2", b_format="e2m1")]


def random_inputs(p, k: int, rng: random.Random, special: float = 0.05):
    """Bit patterns for a, b, c and the scales, with zeros, NaN scales and
    any encodings mixed in."""
    def word(fmt):
        return 0 if rng.random() < 0.1 else rng.getrandbits(fmt.bits)
    a = [word(p.fin) for _ in range(k)]
    b = [word(p.fb) for _ in range(k)]
    c = word(p.fc) & ~(0xFF << 23) | (rng.randint(100, 150) << 23) if rng.random() < 0.8 else word(p.fc)
    n = p.scale_count(k)
    if not n:
        return a, b, c, None, None
    fs = p.fscale

    def scale():
        if rng.random() < special:
            return fs.nan_bits()
        e = fs.bias + rng.randint(-20, 20)
        return min(max(e, 0), fs.max_exp_field) << fs.frac_bits | rng.getrandbits(fs.frac_bits)
    return a, b, c, [scale() for _ in range(n)], [scale() for _ in range(n)]


def exact(p, a, b, c, sa, sb) -> Fraction:
    total = Fraction(p.fc.value(c))
    for i, (x, y) in enumerate(zip(a, b)):
        s = p.fscale.value(sa[i // p.scale_block]) * p.fscale.value(sb[i // p.scale_block])
        total += p.fin.value(x) * p.fb.value(y) * s
    return total


def test_a_wide_window_gives_the_exact_sum_rounded_toward_zero():
    rng = random.Random(5)
    fin, fb = WIDE.fin, WIDE.fb
    for _ in range(200):
        a = [fin.pack(rng.getrandbits(1), rng.randint(1, 14), rng.getrandbits(3)) for _ in range(32)]
        b = [fb.pack(rng.getrandbits(1), rng.randint(8, 22), rng.getrandbits(2)) for _ in range(32)]
        c = rng.getrandbits(31)
        c = c & ~(0xFF << 23) | (rng.randint(110, 140) << 23)
        sa, sb = [rng.randint(120, 134)], [rng.randint(120, 134)]
        want = get_format("float32").round_value(exact(WIDE, a, b, c, sa, sb), "rz")
        assert dot_bits(WIDE, a, b, c, sa, sb) == want


@pytest.mark.parametrize("p", MODELS, ids=lambda m: m.name)
def test_batch_and_smt_terms_equal_the_scalar_interpreter(p):
    rng = random.Random(p.name)
    k = 2 * p.block_size
    rows = [random_inputs(p, k, rng) for _ in range(40)]
    want = np.array([dot_bits(p, *r) for r in rows], dtype=np.uint64)
    a, b, c = (np.array([r[i] for r in rows]) for i in range(3))
    scales = {} if p.scale_format is None else {
        "sa_bits": np.array([r[3] for r in rows]), "sb_bits": np.array([r[4] for r in rows])}
    for engine in ("replay", "direct"):
        assert np.array_equal(dot_batch(p, a, b, c, engine=engine, **scales), want), engine
    I = SmtInterp()
    n = p.scale_count(k)
    d = datapath.dot(I, p, [I.var(f"a{i}", p.fin.bits) for i in range(k)],
                     [I.var(f"b{i}", p.fb.bits) for i in range(k)], I.var("c", p.fc.bits),
                     sa=[I.var(f"sa{j}", p.fscale.bits) for j in range(n)] if n else None,
                     sb=[I.var(f"sb{j}", p.fscale.bits) for j in range(n)] if n else None)
    for r, w in list(zip(rows, want))[:8]:
        values = {f"a{i}": x for i, x in enumerate(r[0])}
        values.update({f"b{i}": y for i, y in enumerate(r[1])}, c=r[2])
        values.update({f"sa{j}": x for j, x in enumerate(r[3] or ())})
        values.update({f"sb{j}": y for j, y in enumerate(r[4] or ())})
        assert evaluate(d, values) == w


def test_a_nan_scale_makes_the_result_nan_even_on_zero_products():
    k = 64
    a, b = [0] * k, [0] * k
    one = 0x7F
    assert dot(MXF4, a, b, 0x3F800000, scale_a=[one, one], scale_b=[one, one]).hex == "0x3f800000"
    assert dot(MXF4, a, b, 0x3F800000, scale_a=[one, 0xFF], scale_b=[one, one]).hex == "0x7fffffff"
    assert dot(MIXED, [0] * 32, [0] * 32, 0, scale_a=[0xFF], scale_b=[one]).kind == "nan"


def test_a_group_that_cancels_still_sets_the_alignment_point():
    """Group 0 sums to zero at scale 2^100; group 2 holds 1 at scale 1: the
    window of 35 bits below 2^100 leaves nothing of group 2 (MMA-Sim's
    MMA_GST_FDPA: 'zeros resulted from summation do not apply e_zero')."""
    a, b = [0] * 64, [0] * 64
    a[0], b[0], a[1], b[1] = 0x2, 0x2, 0x2, 0xA          # 1*1 + 1*(-1) = 0
    a[32], b[32] = 0x2, 0x2                              # 1
    sa, sb = [0x7F + 100, 0x7F], [0x7F, 0x7F]
    assert dot(MXF4, a, b, 0, scale_a=sa, scale_b=sb).hex == "0x00000000"
    a[1] = 0                                             # now group 0 is 1 * 2^100
    assert dot(MXF4, a, b, 0, scale_a=sa, scale_b=sb).hex == "0x71800000"


def test_a_zero_ue4m3_scale_leaves_its_group_out():
    a, b = [0x2] * 64, [0x2] * 64                        # every product 1
    sa = [0x38, 0x00, 0x38, 0x80]                        # 1, 0, 1, and 0 with the sign bit ignored
    d = dot(NVF4, a, b, 0, scale_a=[x & 0x7F for x in sa], scale_b=[0x38] * 4)
    assert d.decimal == "32"


def test_explain_shows_the_scales_and_groups():
    a, b = [0x2] * 64, [0x3] * 64
    lines = explain(MXF4, a, b, 0, [0x7F, 0x80], [0x7F, 0x7F])
    text = "\n".join(f"{k}: {v}" for k, v in lines)
    assert "scales 1: a 1 x 2^1" in text and "group 3" in text
    assert lines[-1][0] == "rounded"


def test_inputs_are_checked_against_each_format():
    with pytest.raises(UserError, match="b = 0x100"):
        dot(MIXED, [0] * 32, [0x100] + [0] * 31, 0, scale_a=[0x7F], scale_b=[0x7F])
    with pytest.raises(UserError, match="give 1 scale"):
        dot(MIXED, [0] * 32, [0] * 32, 0)
    with pytest.raises(UserError, match="need 2"):
        dot(MXF4, [0] * 64, [0] * 64, 0, scale_a=[0x7F], scale_b=[0x7F])
    with pytest.raises(UserError, match="no block scales"):
        dot(BASE, [0] * 4, [0] * 4, 0, scale_a=[0x7F], scale_b=[0x7F])


@pytest.mark.parametrize("change,key", [
    ({"group_size": 3}, "group_size"),
    ({"scale_block": 24}, "scale_block"),
    ({"scale_format": "e4m3"}, "scale_format"),
    ({"scale_format": "ue9m9"}, "scale_format"),
    ({"scale_format": None}, "scale_block"),
    ({"group_size": 16, "term_order": "pairs_mod4"}, "group_size"),
])
def test_the_new_parameters_are_checked_in_one_line(change, key):
    with pytest.raises(ModelFileError, match=f"key '{key}'"):
        MXF4.replace(**change)


# ---------------------------------------------------------------------------
# The shipped block-scaled models from the command line and matmul
# ---------------------------------------------------------------------------

def test_simulate_takes_and_explains_the_scales(capsys):
    from cli_run import tcsmt
    code, out, err = tcsmt(["simulate", "--arch", "blackwell-mxf8f6f4-e4m3-e5m2", "--a", "1,2,0.5",
                            "--b", "1,-3,2^-10", "--c", "0x3f800000", "--scale-a", "0x80",
                            "--scale-b", "0x7e", "--explain"], capsys)
    assert code == 0, err
    assert "scales of a  0x80 (2)" in out and "scales 0" in out
    assert out.rstrip().endswith("d      0xc07ff800 = -3.99951171875")     # 1 + (1 - 6 + 2^-11)
    code, out, err = tcsmt(["simulate", "--arch", "blackwell-nvfp4", "--a", "0x2", "--b", "0x3",
                            "--scale-a", "0xb8", "--scale-b", "0x38", "--explain"], capsys)
    assert code == 0 and "scales of a  0x38 (1)" in out and "aligned group 0" in out   # sign ignored
    for args, msg in ((["--scale-a", "0x7f"], "give 1 scale"),
                      (["--scale-a", "0x38,0x38", "--scale-b", "0x38,0x38"], "need 1"),
                      (["--scale-a", "0x138", "--scale-b", "0x38"], "more than 8 bits")):
        code, _, err = tcsmt(["simulate", "--arch", "blackwell-nvfp4", "--a", "0x2", "--b", "0x3", *args],
                             capsys)
        assert code == 2 and err.startswith("error:") and msg in err, err
    code, _, err = tcsmt(["simulate", "--arch", "ampere", "--a", "1", "--b", "1", "--scale-a", "0x7f"],
                         capsys)
    assert code == 2 and "no block scales" in err


def test_gemm_reads_fp4_and_its_scales_from_npy(tmp_path, capsys):
    import ml_dtypes
    from cli_run import tcsmt

    from tcsmt import matmul
    rng = np.random.default_rng(4)
    A = rng.integers(0, 16, (5, 64)).astype(np.uint8).view(ml_dtypes.float4_e2m1fn)
    B = rng.integers(0, 16, (64, 3)).astype(np.uint8).view(ml_dtypes.float4_e2m1fn)
    C = rng.standard_normal((5, 3)).astype(np.float32)
    SA = rng.uniform(0.1, 8, (5, 4)).astype(np.float32).astype(ml_dtypes.float8_e4m3fn)
    SB = rng.uniform(0.1, 8, (4, 3)).astype(np.float32).astype(ml_dtypes.float8_e4m3fn)
    for name, x in dict(A=A, B=B, C=C, SA=SA, SB=SB).items():
        np.save(tmp_path / f"{name}.npy", x)             # every one-byte type is saved as '<V1'
    want = matmul(A, B, C, model="blackwell-nvfp4", scale_a=SA, scale_b=SB)
    args = ["gemm", *(tmp_path / f"{n}.npy" for n in "ABC"), "-o", tmp_path / "D.npy",
            "--arch", "blackwell-nvfp4"]
    code, out, err = tcsmt([*args, "--scale-a", tmp_path / "SA.npy", "--scale-b", tmp_path / "SB.npy"],
                           capsys)
    assert code == 0, err
    assert np.array_equal(np.load(tmp_path / "D.npy").view(np.uint32), want.view(np.uint32))
    code, _, err = tcsmt(args, capsys)
    assert code == 2 and "give scale_a (5x4) and scale_b (4x3)" in err


def test_agreement_command_writes_the_table_or_refuses_in_one_line(tmp_path, capsys):
    pytest.importorskip("mmasim")
    from cli_run import tcsmt
    out_path = tmp_path / "agreement.json"
    code, out, err = tcsmt(["agreement", "blackwell-mxf4", "--vectors", "64", "-o", out_path], capsys)
    assert code == 0, err
    assert "1 configurations, 64 vectors, 0 differences" in out
    assert out_path.exists() and (tmp_path / "agreement.md").exists()
    for args, msg in ((["nosuch"], "no MMA-Sim configuration"), (["-o", tmp_path / "x.txt"], ".json")):
        code, _, err = tcsmt(["agreement", "--vectors", "2", *args], capsys)
        assert code == 2 and err.startswith("error:") and msg in err
