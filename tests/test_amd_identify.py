"""identify --device sim: with the AMD default models as the device, on the
committed fp16:fp32 plan (the class of plans that exists for them; the
CDNA3 fp8 plans are built elsewhere)."""

from __future__ import annotations

import pytest

from tcsmt.identify.plan import committed_plan, read_plan
from tcsmt.identify.simdevice import run_sim
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
