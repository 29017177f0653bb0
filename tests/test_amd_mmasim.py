"""The AMD models against MMA-Sim (Xie et al., arXiv 2511.10909): every
MFMA configuration of tcsmt.peer.mmasim.PAIRS on a slice of the
agreement run (`tcsmt agreement cdna1 cdna2 cdna3` runs 100 000 vectors
each), and every AMD model's parameters against those MMA-Sim's
mmasim/amd/sim.py gives its instruction.

Run: pytest -m mmasim tests/test_amd_mmasim.py
"""

from __future__ import annotations

import pytest

from tcsmt.model.catalogue import all_models
from tcsmt.model.choose import choose
from tcsmt.peer import agreement
from tcsmt.peer.mmasim import PAIRS, operation
from tcsmt.sim.batch import supported

pytestmark = pytest.mark.mmasim

try:
    import torch
    from mmasim import amd  # noqa: F401  (builds a small C++ extension on first import)
except Exception as e:                # pragma: no cover - depends on the environment
    pytest.skip(f"MMA-Sim cannot be imported ({type(e).__name__}: {e}); "
                "install it with: pip install torch==2.13.0 && pip install mmasim",
                allow_module_level=True)

AMD = [r for r in PAIRS if r[1] == "MFMA"]
SLICE = 300           # vectors per configuration (those run on the scalar simulator: 40)


@pytest.mark.parametrize("row", AMD, ids=lambda r: f"{r[0]}:{r[3]}")
def test_every_amd_configuration_agrees(row):
    """A slice of the agreement run: no difference but the explained ones
    (agreement.reason: the sign of a zero in the models with IEEE zeros, a
    NaN or infinite c that MMA-Sim's CDNA3 fp8 path drops), each replayed;
    NaN compared as a class where MMA-Sim computes in the host's float
    arithmetic (the FMA chains, CDNA1's binary64 sums, CDNA2's binary32
    steps)."""
    n = SLICE if supported(choose(row[0])) else 40
    res = agreement.compare(row, n, seed=2)
    assert res["vectors"] == n
    assert res["reasons"].get("unexplained", 0) == 0, res["examples"][:3]
    assert sum(res["reasons"].values()) == res["differences"]
    for ex in res["examples"]:
        assert ex["replayed"]          # the scalar simulator and MMA-Sim differ on the row alone


def test_every_amd_model_computes_a_configuration():
    mapped = {r[0] for r in AMD}
    amd_models = {m.name for m in all_models() if m.arch.startswith("cdna")}
    assert amd_models == mapped
    assert {r[2] for r in AMD} == {"CDNA1", "CDNA2", "CDNA3"}


TYPES = {torch.float16: "float16", torch.bfloat16: "bfloat16", torch.float32: "float32",
         torch.float64: "float64", torch.float8_e4m3fnuz: "float8_e4m3fnuz",
         torch.float8_e5m2fnuz: "float8_e5m2fnuz"}


@pytest.mark.parametrize("row", AMD, ids=lambda r: f"{r[0]}:{r[3]}")
def test_the_amd_model_has_mmasims_parameters(row):
    p = choose(row[0])
    op = operation(*row[1:])
    a = op.arithmetic_op
    kind = type(a).__name__
    xf32 = row[3].endswith("xf32")             # xf32 operands travel as float32 tensors
    want = ("xf32", "xf32") if xf32 else (TYPES[op.a_type], TYPES[op.b_type])
    assert (p.fin.name, p.fb.name, p.fc.name) == (*want, TYPES[op.c_type])
    if kind == "MMA_FMA":
        assert (p.normalisation, p.block_size, p.final_rounding) == ("every_add", 1, "rne")
    elif kind == "MMA_E_FDPA":
        assert (p.align_rounding, p.block_size, p.final_rounding) == ("exact", a.L_max, "rne")
    elif kind == "MMA_FTZ_MUL_ADD":
        assert (p.subnormals, p.block_size, p.add_order) == ("flush_every_step", a.P, "pairwise")
    else:
        assert kind in ("MMA_TR_FDPA", "MMA_GTR_FDPA") and a.rho == "RNE-FP32"
        assert (p.F, p.late_frac_bits, p.block_size, p.final_rounding) == (a.F, a.F2, a.L_max, "rne")
        assert p.product_groups == (2 if kind == "MMA_GTR_FDPA" else 1)
        assert p.late_c_window == (a.F + 1 if kind == "MMA_GTR_FDPA" else None)


@pytest.mark.parametrize("name", ["cdna1-fp32", "cdna2-fp32", "cdna3-fp32"])
def test_fp32_fma_chains_run_batched_and_equal_the_scalar_simulator(name):
    """An fp32 x fp32 product aligned by its leading one made a 98-bit word
    in the alignment's one-shift form; its two-way form keeps every word
    within 64 bits, so the batch simulator runs the FMA chains and gives the
    scalar simulator's bits (random rows with specials and cancellations)."""
    from tcsmt.observed.random_rows import random_rows
    from tcsmt.sim.batch import dot_batch
    from tcsmt.sim.dot import dot_bits
    p = choose(name)
    assert supported(p)
    rows = random_rows(p, 4, 400, seed=3)
    got = dot_batch(p, rows.a, rows.b, rows.c)
    want = [dot_bits(p, [int(x) for x in rows.a[i]], [int(x) for x in rows.b[i]], int(rows.c[i]))
            for i in range(400)]
    assert [int(x) for x in got] == want
