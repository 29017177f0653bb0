"""The interpretation that shares datapath stage results across hypotheses
(tcsmt.interp.memo) gives the plain Python-int interpreter's bits."""

from __future__ import annotations

from pathlib import Path

from tcsmt.identify.hypspace import identification_space
from tcsmt.interp.memo import MemoInterp
from tcsmt.observed.observations import read_observations
from tcsmt.sim.dot import dot_bits

ROOT = Path(__file__).resolve().parent.parent


def _bits(models, rows, I=None):
    kw = {} if I is None else {"I": I}
    return [[dot_bits(p, list(r.a), list(r.b), r.c, **kw) for r in rows] for p in models]


def test_memo_gives_the_plain_bits_on_h100_fp8_rows_and_shares_stages():
    obs = read_observations(ROOT / "results/hardware/H100/mma-e4m3-f32.json")
    rows = [obs.rows[n] for n in (5, 78, 400)]
    models = identification_space("e4m3:fp32").models()[::257]        # 120 across all three parts
    I = MemoInterp()
    assert _bits(models, rows, I) == _bits(models, rows)
    assert I.memo.hits > 20 * len(models) * len(rows)      # stages answered from other hypotheses
    misses = I.memo.misses
    assert _bits(models, rows, I) == _bits(models, rows)
    assert I.memo.misses == misses            # the second time every stage is answered


def test_memo_emptied_at_its_limit_gives_the_same_bits():
    space = identification_space("fp16:fp32")
    models = space.models()[::997]
    obs = read_observations(ROOT / "results/hardware/H100/mma-f16-f32.json")
    rows = obs.rows[:2]
    I = MemoInterp(limit=50)
    assert _bits(models, rows, I) == _bits(models, rows)
    assert I.memo.misses > 50
