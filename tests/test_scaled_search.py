"""Searches over block-scaled models: the scales of a and b are free inputs
of the separation formula, witnesses carry them, result files record them
and replay with them; the free-products bounds hold for multipliers whose
factors differ in width (a scale's significand times a group sum)."""

from __future__ import annotations

import pytest

from tcsmt.errors import UserError
from tcsmt.interp.ints import INT
from tcsmt.model.choose import choose
from tcsmt.report import results
from tcsmt.search import pool
from tcsmt.search.diff import run_diff
from tcsmt.search.domain import Domain
from tcsmt.search.separation import decode, separation_formula
from tcsmt.search.shrink import shrink
from tcsmt.search.vectors import Hypothesis, outputs, separated_by
from tcsmt.smt.abstraction import bounds


def _hyps(name: str, sets_b: list[str]) -> list[Hypothesis]:
    return [Hypothesis("A", choose(name)), Hypothesis("B", choose(name, overrides=sets_b))]


def test_diff_of_scaled_models_finds_a_witness_with_scales(tmp_path):
    """A window one bit narrower on the NVFP4 path (k=16, one scale pair):
    the solver picks the scales, the witness replays, the file keeps them."""
    hs = _hyps("blackwell-mxf4nvf4-b16", ["align_bits=11"])
    out = run_diff(hs, 16, Domain(), timeout=120)
    assert out.verdict == "sat"
    vec = out.vector
    assert len(vec.sa) == len(vec.sb) == 1
    outs = outputs(vec, hs)
    assert outs["A"] != outs["B"]
    query = {"kind": "diff", "description": "a window one bit narrower", "k": 16,
             "domain": Domain().describe(), "command": ""}
    doc = results.make_result(query, hs, [vec], "sat", results.run_record(out.seconds))
    assert doc["formats"]["scale"] == hs[0].params.scale_format
    assert [x["hex"] for x in doc["vectors"][0]["scale_a"]] == [f"{vec.sa[0]:#04x}"]
    path = tmp_path / "r.json"
    results.write_result(path, doc)
    p = hs[0].params
    back = results.read_vector(results.load(path)["vectors"][0],
                               {"a": p.fin, "b": p.fb, "c": p.fc, "scale": p.fscale})
    assert back == vec
    assert results.replay(path).ok
    doc["vectors"][0]["scale_a"][0] = results.number(hs[0].params.fscale, (vec.sa[0] + 1) % 0xff)
    changed = tmp_path / "r-other-scale.json"    # a new file: r.json has been read in this process
    results.write_result(changed, doc)
    assert not results.replay(changed).ok        # the file's outputs need its scales


def test_decode_reads_the_scales_and_fills_absent_ones_with_one():
    p = choose("blackwell-mxf4")
    vec = decode({"a0": 2, "b0": 2, "sa0": 0x80}, 64, p)
    assert vec.sa == (0x80, 0x7f) and vec.sb == (0x7f, 0x7f)


def test_models_that_scale_differently_are_refused():
    hs = [Hypothesis("A", choose("blackwell-mxf4nvf4-b16")),
          Hypothesis("B", choose("blackwell-mxf4nvf4-b32"))]
    with pytest.raises(UserError, match="scale differently"):
        separation_formula(hs, 64, Domain())


def test_pool_vectors_carry_scales_and_separate():
    hs = _hyps("blackwell-mxf4nvf4-b16", ["align_bits=11"])
    vecs = pool.search(hs, 16, Domain(), [(0, 1)])
    assert vecs and all(len(v.sa) == 1 for v in vecs)
    assert (0, 1) in separated_by(vecs[0], hs)
    small = shrink(vecs[0], hs, [(0, 1)], Domain())
    assert small.sa and (0, 1) in separated_by(small, hs)


@pytest.mark.parametrize("wx,wy", [(2, 4), (4, 2), (3, 3), (1, 5)])
def test_free_product_bounds_hold_for_every_pair_of_factors(wx, wy):
    """Every real product satisfies the bounds the abstraction asserts, also
    when the factors' widths differ (there the size bounds used to be false)."""
    w = wx + wy
    for x in range(1 << wx):
        for y in range(1 << wy):
            X, Y = INT.const(x, w), INT.const(y, w)
            P = INT.const(x * y, w)
            assert all(c.b for c in bounds(INT, P, X, Y, w // 2)), (x, y)
