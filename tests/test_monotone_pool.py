"""Monotonicity witnesses from candidate pairs (tcsmt.search.monotone_pool):
x, and y made from x by making one input larger, run through the batch
simulator; a pair is taken only after it replays on the concrete model."""

from __future__ import annotations

import json
from pathlib import Path

from tcsmt.properties.registry import get_property
from tcsmt.properties.run import resolve_base
from tcsmt.report.documents import prior_vectors
from tcsmt.search import monotone_pool
from tcsmt.search.monotonic import CANDIDATES, check_witness, run_monotonicity

ROOT = Path(__file__).resolve().parent.parent
PROP = get_property("monotonicity")


def test_every_candidate_pair_has_x_le_y_and_the_first_that_replays_is_taken():
    base = resolve_base(PROP, "blackwell-ultra")
    k = PROP.k(base)
    pairs = list(monotone_pool.search(base, k))
    assert pairs
    for x, y in pairs[:20]:
        assert all(base.fin.value(p) <= base.fin.value(q) for p, q in zip(x.a, y.a))
    out = run_monotonicity(base, k, timeout=1)
    assert out.verdict == "sat" and out.tag == CANDIDATES
    check_witness(base, k, *out.vectors)


def test_without_the_pool_the_solvers_are_asked():
    base = resolve_base(PROP, "blackwell-ultra")
    out = run_monotonicity(base, PROP.k(base), timeout=1, pool=False)
    assert out.tag != CANDIDATES


def test_the_committed_witnesses_from_candidates_replay():
    """blackwell-ultra, blackwell-e2m3-fp32 and blackwell-e4m3-e5m2-fp32
    had no answer from the solvers in 60 s; the candidates found these."""
    for model in ("blackwell-ultra", "blackwell-e2m3-fp32", "blackwell-e4m3-e5m2-fp32"):
        doc = json.loads((ROOT / "results" / model / "monotonicity.json").read_text())
        assert doc["verdict"] == "sat"
        base = resolve_base(PROP, model)
        x, y = prior_vectors(doc)
        check_witness(base, PROP.k(base), x, y)


def test_moved_rows_keep_x_le_y_with_a_and_b_non_negative_and_finite():
    """The next value up of a format's largest one wraps into the sign bit
    (e2m1's 0x7 + 1 is -0): such rows are dropped, not taken as x <= y."""
    from tcsmt.model.choose import choose
    p = choose("blackwell-nvfp4")
    a, b, c, ya, yb, yc = monotone_pool.moved_rows(p, p.block_size, 2000, 0)
    assert len(c) > 1000
    sign = 1 << (p.fin.bits - 1)
    for xs, ys in ((a, ya), (b, yb)):
        assert not ((xs & sign).any() or (ys & sign).any())
        assert (ys >= xs).all()
    assert all(p.fc.value(int(u)) <= p.fc.value(int(v)) for u, v in zip(c[:200], yc[:200]))


def test_the_search_yields_no_pair_on_a_monotone_model():
    """Exact accumulation rounded once to nearest is monotone: the
    simulator orders no candidate pair f(x) > f(y), so nothing is taken."""
    from tcsmt.model.choose import choose
    p = choose("blackwell-ultra", overrides=("align_rounding=exact",))
    assert list(monotone_pool.search(p, p.block_size)) == []
