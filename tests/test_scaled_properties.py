"""The properties of block-scaled models (group-size, scale-specials,
c-entry, scale-point): they apply only to scaled models, their hypotheses
are distinct models, the targeted pool separates every pair on the scaled
defaults regen covers (each vector replayed on the concrete model), and the
two new datapath choices (scale_nan, scale_zero) mean what they say."""

from __future__ import annotations

from fractions import Fraction

import pytest

from tcsmt.errors import UserError
from tcsmt.model.choose import choose
from tcsmt.model.formats import get_format
from tcsmt.properties.registry import get_property
from tcsmt.properties.run import hypotheses, resolve_base
from tcsmt.regen.jobs import MODELS
from tcsmt.search import pool
from tcsmt.search.vectors import all_pairs, separated_by
from tcsmt.sim.dot import dot_bits

NEW = ("group-size", "scale-specials", "c-entry", "scale-point")
SCALED = [m for m in MODELS if choose(m).scale_format is not None]
F32 = get_format("float32")


def test_regen_covers_block_scaled_models():
    assert {"blackwell-nvfp4", "blackwell-mxf4", "blackwell-mxf8f6f4-e4m3"} <= set(SCALED)


@pytest.mark.parametrize("name", NEW)
def test_new_properties_apply_only_to_scaled_models(name):
    prop = get_property(name)
    with pytest.raises(UserError, match="no block scales"):
        resolve_base(prop, "ampere")
    for m in SCALED:
        hyps = hypotheses(prop, resolve_base(prop, m))
        assert len({repr(h.params.parameter_dict()) for h in hyps}) == len(hyps) >= 2


@pytest.mark.parametrize("model", SCALED)
@pytest.mark.parametrize("name", NEW)
def test_targeted_pool_separates_every_pair(name, model):
    """Sampling the batch simulator (or, for fp8 groups, the scalar one)
    separates every pair; what a vector separates is recomputed here."""
    prop = get_property(name)
    base = resolve_base(prop, model)
    hyps = hypotheses(prop, base)
    domain = prop.domain(base)
    vecs = pool.search(hyps, prop.k(base), domain, all_pairs(len(hyps)))
    done = set().union(*(separated_by(v, hyps) for v in vecs))
    assert done == set(all_pairs(len(hyps)))
    for v in vecs:
        assert domain.contains(base.fin, base.fc, list(v.a), list(v.b), v.c, base.fb)
        assert len(v.sa) == len(v.sb) == base.scale_count(prop.k(base))


def _nvfp4(**sets):
    return choose("blackwell-nvfp4", overrides=[f"{k}={v}" for k, v in sets.items()])


ONE, NAN, ZERO, BIG, TINY = 0x38, 0x7F, 0x00, 0x7E, 0x01     # ue4m3: 1, NaN, 0, 448, 2^-9


def test_nan_scale_is_nan_or_the_value_its_fields_spell():
    a = [0x2] + [0] * 63                       # e2m1 1.0 times 1.0
    sa, sb = [NAN, ONE, ONE, ONE], [ONE] * 4
    assert F32.classify(dot_bits(_nvfp4(), a, a, 0, sa, sb)) == "nan"
    assert F32.value(dot_bits(_nvfp4(scale_nan="value"), a, a, 0, sa, sb)) == 480


def test_zero_scale_dead_or_aligned():
    """A group whose scale is zero sits 2^2 or so above a product scaled by
    2^-18: left out of the alignment, c = 2^-38 is kept; aligned, the
    window's last bit is far above c and c is cut off."""
    a = [0x7] + [0] * 15 + [0x2] + [0] * 47           # 6 in group 0, 1 in group 1
    sa, sb = [ZERO, TINY, ONE, ONE], [BIG, TINY, ONE, ONE]
    c = F32.round_value(Fraction(1, 2**38))
    dead = F32.value(dot_bits(_nvfp4(), a, a, c, sa, sb))
    aligned = F32.value(dot_bits(_nvfp4(scale_zero="aligned"), a, a, c, sa, sb))
    assert dead == Fraction(1, 2**18) + Fraction(1, 2**38)
    assert aligned == Fraction(1, 2**18)
