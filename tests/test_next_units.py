"""The next units (docs/units-next.md): AMD RDNA3/RDNA3.5 and RDNA4 WMMA,
CDNA4's block-scaled MFMA, NVIDIA Blackwell Ultra.

* The RDNA models reproduce tests/rdna_reference.py, an integer reading of
  rocm-systems#12056 written apart from the datapath.
* Each committed plan is the plan of its space file, and identification
  blind to the device's parameters recovers every hypothesis of every
  space: the device (a hypothesis run by the scalar simulator) answers
  only the plan's vectors, and the class the tree ends in holds it.
"""

from __future__ import annotations

import random

import pytest
from checkout import RESULTS
from rdna_reference import wmma

from tcsmt.identify.hypspace import load_space_file
from tcsmt.identify.plan import build_plan, read_plan
from tcsmt.identify.simdevice import run_sim
from tcsmt.model.choose import choose
from tcsmt.sim.dot import dot_bits

PLANS = RESULTS / "plans"
SPACES = {  # space file -> (plan, instruction)
    "rdna3-fp16-space.toml": ("rdna3-fp16-fp32.json", "v_wmma_f32_16x16x16_f16"),
    "rdna4-fp16-space.toml": ("rdna4-fp16-fp32.json", "v_wmma_f32_16x16x16_f16 (gfx12)"),
    "cdna4-mxfp8-space.toml": ("cdna4-mxfp8-fp32.json", "v_mfma_scale_f32_32x32x64_f8f6f4 (fp8 x fp8)"),
}
_PLANS: dict = {}


def plan_for(space: str):
    if space not in _PLANS:
        _PLANS[space] = read_plan(PLANS / SPACES[space][0])
    return _PLANS[space]


def _row(rng: random.Random, bf16: bool) -> tuple[list[int], list[int], int]:
    """Sixteen terms near 1 with random signs and a c near 1 (cancellation
    in every step), or random words, or words near the subnormal range."""
    kind = rng.randrange(3)
    one, tiny = (0x3F80, 0x1F80) if bf16 else (0x3C00, 0x2000)
    if kind == 0:
        ws = [(one ^ rng.getrandbits(8)) | rng.getrandbits(1) << 15 for _ in range(32)]
        c = (0x3F800000 ^ rng.getrandbits(20)) | rng.getrandbits(1) << 31
    elif kind == 1:
        top = 0x7F80 if bf16 else 0x7C00
        ws = [w ^ 0x4000 if w & top == top else w for w in (rng.getrandbits(16) for _ in range(32))]
        c = rng.getrandbits(32)
        c ^= 0x40000000 if c & 0x7F800000 == 0x7F800000 else 0
    else:
        ws = [(tiny ^ rng.getrandbits(9)) | rng.getrandbits(1) << 15 for _ in range(32)]
        c = (0x00800000 ^ rng.getrandbits(24)) | rng.getrandbits(1) << 31
    return ws[:16], ws[16:], c


@pytest.mark.parametrize("name", ["rdna3-fp16-fp32", "rdna3-bf16-fp32", "rdna4-fp16-fp32",
                                  "rdna4-bf16-fp32"])
def test_rdna_models_follow_the_published_accumulator(name):
    p = choose(name)
    rng = random.Random(name)
    bf16, rdna4 = "bf16" in name, name.startswith("rdna4")
    for _ in range(300):
        a, b, c = _row(rng, bf16)
        assert dot_bits(p, a, b, c) == wmma(a, b, c, bf16, rdna4), (name, a, b, hex(c))


def test_rdna3_opposing_terms_count_one_unit_more():
    """rocm-systems#12056's example: c = -1, products +32 and +24 land 2 units
    of 2^-19 (one per opposing term) further from zero than exact negation."""
    p = choose("rdna3-fp16-fp32")
    a, b = [0x5000, 0x4E00] + [0] * 14, [0x3C00, 0x3C00] + [0] * 14   # 32, 24
    got = dot_bits(p, a, b, 0xBF800000)
    assert got == wmma(a, b, 0xBF800000, False, False)
    assert got != 0x425C0000          # 55 exactly (what an IEEE adder gives)


@pytest.mark.parametrize("space", sorted(SPACES))
def test_committed_plan_is_the_plan_of_its_space(space):
    plan = plan_for(space)
    assert plan.space.digest() == load_space_file(PLANS / space).digest()
    assert plan.instruction == SPACES[space][1]
    assert sorted(i for cl in plan.classes for i in cl.members) == list(range(plan.space.size))


def _hypotheses():
    out = []
    for space in sorted(SPACES):
        n = load_space_file(PLANS / space).size
        out += [(space, i) for i in range(n)]
    return out


@pytest.mark.parametrize("space,i", _hypotheses(), ids=lambda x: str(x).replace(".toml", ""))
def test_blind_identification_recovers_every_hypothesis(space, i):
    """Every hypothesis as the device: the tree, fed only the device's
    outputs, ends in the class that holds it, within the plan's worst case."""
    plan = plan_for(space)
    p = plan.models()[i]
    rec = run_sim(p, None, plan, prove=False, confirm=False)
    assert "failure" not in rec["phase1"], rec
    assert i in plan.classes[rec["phase1"]["class"]].members, (p.name, rec["phase1"])
    assert rec["phase1"]["runs"] <= plan.stats["worst_case_runs"]


@pytest.mark.parametrize("name,space", [("rdna3-fp16-fp32", "rdna3-fp16-space.toml"),
                                        ("rdna4-fp16-fp32", "rdna4-fp16-space.toml")])
def test_shipped_rdna_models_are_recovered(name, space):
    rec = run_sim(name, None, plan_for(space), prove=True, timeout=60, confirm=False)
    assert rec["check"]["phase1_verdict"] == "recovered", rec["check"]


def test_plan_builds_the_rdna3_space(tmp_path):
    """tcsmt plan on the RDNA3 space file, as committed: every hypothesis a
    class of its own."""
    space = load_space_file(PLANS / "rdna3-fp16-space.toml")
    plan = build_plan(space, "gfx1100", pool_size=1000, solver_budget=0.0)
    assert plan.instruction == "v_wmma_f32_16x16x16_f16"
    assert len(plan.classes) == space.size
