"""The interpretation that shares datapath stage results across hypotheses
(tcsmt.interp.memo) gives the plain Python-int interpreter's bits."""

from __future__ import annotations

from pathlib import Path

from tcsmt.identify.hypspace import identification_space
from tcsmt.interp.memo import MemoInterp, RowsInterp
from tcsmt.model.choose import choose
from tcsmt.observed.observations import read_observations
from tcsmt.observed.random_rows import random_rows
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


def test_rows_memo_gives_the_plain_bits_and_answers_the_products():
    """RowsInterp (element stages kept across rows) on recorded fp8 rows of
    three models, on random rows of every encoding of block-scaled and
    fp16 models, and emptied at a small limit: the plain bits."""
    obs = read_observations(ROOT / "results/hardware/H100/mma-e4m3-f32.json")
    rows = obs.rows[:40]
    models = [choose(n) for n in ("hopper-e4m3-fp32", "hopper-e4m3-fp32-mma", "hopper-e4m3-fp16")]
    I = RowsInterp()
    assert _bits(models, rows, I) == _bits(models, rows)
    assert I.memo.hits > I.memo.misses
    for name, limit in (("blackwell-nvfp4", 1000), ("blackwell-mxf8f6f4-e4m3-e5m2", 50),
                        ("hopper-fp16-fp32", 1000)):
        p = choose(name)
        r = random_rows(p, 2 * p.block_size + 3, 30, 1)
        sa, sb = r.scale_bits(p)
        want = [dot_bits(p, list(map(int, r.a[i])), list(map(int, r.b[i])), int(r.c[i]),
                         None if sa is None else list(map(int, sa[i])),
                         None if sb is None else list(map(int, sb[i]))) for i in range(30)]
        I = RowsInterp(limit)
        got = [dot_bits(p, list(map(int, r.a[i])), list(map(int, r.b[i])), int(r.c[i]),
                        None if sa is None else list(map(int, sa[i])),
                        None if sb is None else list(map(int, sb[i])), I=I) for i in range(30)]
        assert got == want, name


def test_subnormal_settings_that_agree_on_a_stage_share_it():
    """A stage reads what the subnormal setting means for it (flags of
    ModelParams), not the setting's name: after keep, flush_outputs on the
    same rows differs only in its final roundings (4 stages for 4 rows; 72
    when the products read the name), with the plain interpreter's bits."""
    p = choose("hopper-e4m3-fp32")
    r = random_rows(p, 16, 4, seed=2)
    rows = [([int(x) for x in r.a[i]], [int(x) for x in r.b[i]], int(r.c[i])) for i in range(4)]
    I = MemoInterp()
    assert [dot_bits(p, *row, I=I) for row in rows] == [dot_bits(p, *row) for row in rows]
    first = I.memo.misses
    q = p.replace(subnormals="flush_outputs")
    assert [dot_bits(q, *row, I=I) for row in rows] == [dot_bits(q, *row) for row in rows]
    assert I.memo.misses - first <= len(rows) < first


def test_rows_memo_tells_the_plain_domain_membership():
    """Domain.contains through RowsInterp (as candidate_vectors and identify
    run it on many rows): the plain answers, on rows inside and outside
    the fp8 plan domain (NaN, infinite and subnormal encodings), and it
    answers the inputs' unpacking from its memo."""
    import random

    from tcsmt.identify.plan import plan_domain
    from tcsmt.interp.ints import INT
    from tcsmt.model.formats import get_format
    fin, fc = get_format("e4m3"), get_format("fp32")
    dom = plan_domain(fin, fc)
    rng = random.Random(3)
    rows = [([rng.choice([rng.randrange(256), 0x7F, 0x01, 0x38]) for _ in range(8)],
             [rng.randrange(256) for _ in range(8)], rng.choice([0, 0x3F800000, 0x7F800000, 1]))
            for _ in range(300)]
    I = RowsInterp()
    want = [dom.contains(fin, fc, a, b, c, I=INT) for a, b, c in rows]
    assert [dom.contains(fin, fc, a, b, c, I=I) for a, b, c in rows] == want
    assert 0 < sum(want) < len(want)
    assert I.memo.hits > I.memo.misses


def test_formats_are_keyed_by_object_and_equal_copies_miss_rather_than_answer_wrongly():
    from dataclasses import replace

    from tcsmt.datapath.terms import unpack
    from tcsmt.model.formats import get_format, internal_format
    I = MemoInterp()
    memo = I.memo
    e8m13 = internal_format(8, 13)
    assert internal_format(8, 13) is e8m13            # one object: its stages are shared
    copy = replace(get_format("e4m3"))
    assert copy == get_format("e4m3") and copy is not get_format("e4m3")
    assert memo.format_key(copy) != memo.format_key(get_format("e4m3"))
    assert memo.format_key(e8m13) == memo.format_key(internal_format(8, 13))
    word = I.const(0x3C, 8)
    first = unpack(I, get_format("e4m3"), word, 12, False)
    misses = memo.misses
    again = unpack(I, copy, word, 12, False)          # the copy misses, then gives equal bits
    assert memo.misses == misses + 1
    assert memo.key(again) == memo.key(first)
    fp16 = unpack(I, get_format("fp16"), I.const(0x3C, 16), 12, False)
    assert memo.key(fp16) != memo.key(first)           # another format, another term
