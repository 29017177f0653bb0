"""Carry bits of the accumulator above the largest term (VLPG: 3 needed and
sufficient for the 5-term Volta adder). `tcsmt find carry-bits` finds inputs
telling the counts apart; `tcsmt prove carry-bits` proves the fewest that
give the same bits as an unbounded accumulator."""

from tcsmt import bv
from tcsmt.properties import Property, hyp, not_fp64


def needed_bound(p):
    """A count certainly enough: log2 of the number of terms, plus one."""
    return bv.bits_for(p.block_size + 1)


def hypotheses(p):
    top = needed_bound(p)
    return [hyp(str(n), carry_bits=n) for n in range(max(0, top - 3), top)] + \
        [hyp("unbounded", carry_bits=None)]


PROPERTY = Property(
    name="carry-bits",
    description="carry bits of the accumulator: too few give wrong sums on large terms",
    parameters=("carry_bits",),
    hypotheses=hypotheses,
    applies=not_fp64,
)
