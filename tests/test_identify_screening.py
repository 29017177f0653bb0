"""What makes identification from recorded rows cheaper leaves its answer as
it was: the space's digest read from its axes, the screening that shares
stage results across hypotheses, screening in rounds before the batch
stages."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tcsmt.identify import narrow
from tcsmt.identify.hypspace import identification_space, scaled_space
from tcsmt.identify.narrow import row_arrays
from tcsmt.observed.observations import read_observations
from tcsmt.sim import evaluate
from tcsmt.sim.evaluate import screen

ROOT = Path(__file__).resolve().parent.parent
E4M3 = ROOT / "results/hardware/H100/mma-e4m3-f32.json"


def _digest_of_models(space) -> str:
    h = hashlib.sha256()
    for m in space.models():
        h.update(repr(sorted(m.parameter_dict().items())).encode())
    return h.hexdigest()


@pytest.mark.parametrize("space", [
    lambda: identification_space("e4m3:fp32"),          # three parts, 30816 hypotheses
    lambda: identification_space("fp16:fp32"),          # AMD parts: c placement, pair sums
    lambda: scaled_space("e2m1:fp32", "ue4m3/16"),      # scales (parameters of LATER_DEFAULTS)
])
def test_digest_from_the_axes_is_the_digest_of_every_hypothesis(space):
    sp = space()
    assert sp.digest() == _digest_of_models(sp)


@pytest.fixture(scope="module")
def e4m3_rows():
    obs = read_observations(E4M3)
    return obs, row_arrays(obs)


@pytest.fixture(scope="module")
def e4m3_models():
    return identification_space("e4m3:fp32").models()[::193]         # 160 hypotheses, all parts


def test_shared_screening_keeps_what_the_plain_one_keeps(e4m3_rows, e4m3_models, monkeypatch):
    """On rows where a row rules hypotheses out by some parameters' values
    and not by others, the screening that shares stage results keeps
    exactly the hypotheses the plain Python-int interpreter keeps."""
    _, (a, b, c, d) = e4m3_rows
    models = e4m3_models
    for rows in ([78], [5, 1999]):
        monkeypatch.setattr(evaluate, "SCREEN_MEMO", True)
        shared = screen(models, a, b, c, d, workers=1, order=rows)
        monkeypatch.setattr(evaluate, "SCREEN_MEMO", False)
        plain = screen(models, a, b, c, d, workers=1, order=rows)
        assert shared == plain and 0 < len(shared) < len(models)
    kept = [models[i] for i in screen(models, a, b, c, d, workers=1, order=[78])]
    # the row keeps some values of a parameter and rules out others
    by = {name: {getattr(m, name) for m in kept} < {getattr(m, name) for m in models}
          for name in ("final_rounding", "block_size", "normalisation", "acc_format")}
    assert any(by.values()), by


def test_identify_screening_in_rounds_leaves_the_same_hypotheses(monkeypatch):
    """identify (no plan) screening in rounds (each on rows chosen for the
    hypotheses the round before left) with shared stage results leaves the
    hypotheses and classes the batch stages alone leave."""
    obs = read_observations(E4M3)
    obs.rows = obs.rows[:300]
    space = identification_space("e4m3:fp32")
    space.parts = space.parts[2:]                     # the mma.sync part (c added after)
    monkeypatch.setattr(narrow, "SCREEN_MIN", 2)
    monkeypatch.setattr(narrow, "ROUND_MIN", 2)
    said: list[str] = []
    screened = narrow.identify(obs, space, log=said.append)
    rounds = [line for line in said if line.startswith("screening ")]
    assert len(rounds) >= 2, said                    # a second round on rows chosen for those left
    monkeypatch.setattr(narrow, "SCREEN_MIN", 1 << 62)
    batch = narrow.identify(obs, space)
    assert screened.consistent == batch.consistent and screened.classes == batch.classes
    assert screened.consistent and len(screened.consistent) < space.size
