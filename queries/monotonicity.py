"""Monotonicity: inputs x <= y elementwise (same signs) with f(x) > f(y),
or a proof that none exist. Without normalisation of partial sums and with
truncation, V100 is not monotonic (F21: a=[1]*4, b=[p]*4, c=1-p gives
1+2^-23 but c=1 gives 1)."""

from tcsmt.enums import PropertyKind
from tcsmt.properties.registry import Property, hyp, not_fp64

PROPERTY = Property(
    name="monotonicity",
    description="x <= y elementwise with f(x) > f(y), or a proof that none exist",
    parameters=(),
    hypotheses=lambda p: [hyp("model")],
    applies=not_fp64,
    kind=PropertyKind.MONOTONIC,
)
