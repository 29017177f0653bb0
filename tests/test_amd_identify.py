"""identify --device sim: with the AMD default models as the device, on the
committed fp16:fp32 plan (the class of plans that exists for them; the
CDNA3 fp8 plans are built elsewhere)."""

from __future__ import annotations

import pytest

from tcsmt.identify.hypspace import HypSpace, single
from tcsmt.identify.plan import build_plan, committed_plan, read_plan
from tcsmt.identify.report import projection
from tcsmt.identify.simdevice import run_sim
from tcsmt.identify.space import Space, default_space, load_space, neutral_base
from tcsmt.model.catalogue import find_model


@pytest.fixture(scope="module")
def fp16_plan():
    path = committed_plan("fp16:fp32")
    assert path is not None, "no committed fp16:fp32 plan (tcsmt plan --formats fp16:fp32)"
    return read_plan(path)


def test_cdna1_exact_sum_is_named_outside_the_space(fp16_plan):
    """The plan's space has no exact block sum: the loop stops at the run
    no branch explains and names the parameters the space lacks."""
    rec = run_sim("cdna1", None, fp16_plan, prove=False)
    assert find_model("cdna1").align_rounding == "exact"
    assert rec["verdict"] == "outside the space", rec
    assert rec["outside_the_space"]["align_rounding"] == "exact"
    assert rec["failure"]["closest"]


SMALL = """
base = "hopper-fp16-fp32"
[axes]
block_size = [4, 8, 16]
align_bits = [0, 1, 2]
final_rounding = ["rz", "rne"]
subnormals = ["keep", "flush_outputs"]
"""


def test_no_prove_never_says_recovered_for_a_device_off_its_class(tmp_path):
    """A device whose values are in no hypothesis of the class it ends in
    (subnormal inputs flushed: no axis value of the space) may follow the
    plan's tree to a class; without a proof that is not a recovery."""
    (tmp_path / "small.toml").write_text(SMALL)
    plan = build_plan(single(load_space(tmp_path / "small.toml")), pool_size=600, solver_budget=0)
    dev = find_model("hopper-fp16-fp32").replace(subnormals="flush_inputs", name="flushing")
    rec = run_sim(dev, None, plan, prove=False)
    assert "cls" in rec, rec                       # the walk reaches a class
    assert not rec["projection_in_class"]
    assert not rec["verdict"].startswith("recovered"), rec
    assert rec["outside_the_space"] == {"subnormals": "flush_inputs"}


def test_projection_is_the_closest_part_not_the_one_with_fewest_axes():
    """CDNA2 (pairwise IEEE additions, flushing at every step) against the
    default axes and the c-late part: the default part varies its
    align_rounding and normalisation, so those are not outside the space;
    what is outside is what no part holds (its subnormals, its add_order)."""
    base = neutral_base("fp16:fp32")
    late = Space(base.replace(c_placement="late", late_frac_bits=31, zero_sign="ieee",
                              product_overflow="inf"),
                 {"block_size": [4, 8], "final_rounding": ["rz", "rne"]}, name="c-late")
    space = HypSpace([default_space("fp16:fp32"), late])
    idx, outside = projection(space, find_model("cdna2-fp16-fp32"))
    assert idx is None
    assert "subnormals" in outside and "add_order" in outside
    assert "align_rounding" not in outside and "normalisation" not in outside
    assert "c_placement" not in outside
    idx, outside = projection(space, find_model("cdna3-fp16-fp32"))
    assert space.models()[idx].name.startswith("c-late:") and outside == []
