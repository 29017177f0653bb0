"""The identification loop (tcsmt.identify.loop): one walk of a plan for every
device, the vectors of a launch chosen by the batch, runs and launches
counted apart."""

from __future__ import annotations

import numpy as np
import pytest

from tcsmt.errors import UserError
from tcsmt.identify.loop import ModelDevice, launch_set, runs_line, walk_plan
from tcsmt.identify.plan import committed_plan, read_plan
from tcsmt.model.choose import choose


@pytest.fixture(scope="module")
def plan():
    path = committed_plan("fp16:fp32")
    assert path is not None
    return read_plan(path)


def test_batches_walk_the_same_path(plan):
    """one, frontier and plan end in the same class after the same runs;
    only the launches differ."""
    dev = ModelDevice(choose("hopper"), "sim:hopper")
    walks = {b: walk_plan(plan, dev, b) for b in ("one", "frontier", "plan")}
    one, frontier, whole = walks["one"], walks["frontier"], walks["plan"]
    assert one.failure is None and "class" in one.node
    for w in (frontier, whole):
        assert w.steps == one.steps and w.node is one.node
    assert one.launches == one.vectors_run == len(one.steps) == 5
    assert whole.launches == 1 and whole.vectors_run == len(plan.vectors)
    # a frontier launch answers the step it was made for and the next one
    assert frontier.launches == 2 < one.launches
    assert one.vectors_run < frontier.vectors_run < whole.vectors_run
    first = launch_set(plan, plan.tree, "frontier")
    assert first[0] == plan.tree["vector"] and len(first) == len(set(first)) > 1
    children = {ch["vector"] for ch in plan.tree["outputs"].values() if "vector" in ch}
    assert set(first[1:]) == children
    assert runs_line(frontier.counts()) == \
        f"runs needed: 5 (on the plan's path; 2 launches ran {frontier.vectors_run} vectors)"


class _Off:
    """A unit whose first output is off by one unit in the last place of
    what the device model gives: no branch of the plan holds it."""
    name = "off-by-one"

    def __init__(self, p):
        self.inner = ModelDevice(p, "inner")

    def run(self, rows):
        return self.inner.run(rows) ^ np.uint64(1)


def test_an_output_no_branch_holds_ends_the_walk(plan):
    w = walk_plan(plan, _Off(choose("hopper")), "frontier")
    assert w.failure is not None and w.failure["run"] == len(w.steps) == 1
    assert w.failure["closest"][0]["ulps"] == 1


class _Short:
    name = "short"

    def run(self, rows):
        return np.zeros(len(rows.c) - 1, dtype=np.uint64)


def test_a_device_that_returns_too_few_outputs_is_an_error(plan):
    with pytest.raises(UserError, match="returned 0 outputs for 1 vectors"):
        walk_plan(plan, _Short(), "one")
    with pytest.raises(UserError, match="--batch 'all'"):
        walk_plan(plan, _Short(), "all")
