"""round_fixed has two forms of its shifts (one left shift into a word
fb + 2 bits wider than the register, or a right or left shift with the
shifted-out bits as guard and sticky, for registers too wide for 64-bit
words): both must give the same bits on every model."""

import random

import pytest
from model_sample import MODELS as SAMPLE
from model_sample import mask_for, scales_for

from tcsmt.datapath import rounding
from tcsmt.sim.dot import dot_bits

MODELS = {m.name: m for m in SAMPLE if not m.fout.is_integer}    # integers round nothing


def _inputs(p, rng: random.Random, k: int):
    def pick(fmt):
        r = rng.random()
        if r < 0.15:
            # zeros, subnormals
            return rng.choice([0, 1, (1 << (fmt.bits - 1)) | 1, (1 << fmt.frac_bits) - 1])
        e = rng.randrange(1, (1 << fmt.exp_bits) - 1)
        e = rng.choice([e, 1, 2, (1 << fmt.exp_bits) - 2])      # many near the bottom and top
        return (rng.getrandbits(1) << (fmt.bits - 1)) | (e << fmt.frac_bits) | rng.getrandbits(fmt.frac_bits)
    return ([pick(p.fin) for _ in range(k)], [pick(p.fb) for _ in range(k)], pick(p.fc),
            *scales_for(p, k, rng), mask_for(p, k, rng))


@pytest.mark.parametrize("name", sorted(MODELS))
def test_one_shift_and_two_way_forms_agree(name, monkeypatch):
    p = MODELS[name]
    rng = random.Random(name)
    k = min(p.block_size, 8) if p.group_size == 1 else p.block_size
    cases = [_inputs(p, rng, k) for _ in range(60)]
    monkeypatch.setattr(rounding, "NARROW_WORD", 10_000)
    wide = [dot_bits(p, *case) for case in cases]
    monkeypatch.setattr(rounding, "NARROW_WORD", 0)
    two_way = [dot_bits(p, *case) for case in cases]
    assert wide == two_way
