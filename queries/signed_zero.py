"""The sign of an exact zero result: always +0 (as published simulators
return) or by IEEE rules (-0 + -0 = -0; x - x = +0, or -0 when rounding
down)."""

from tcsmt.properties.registry import Property, hyp, not_fp64

PROPERTY = Property(
    name="signed-zero",
    description="sign of an exact zero result: always +0 vs IEEE rules",
    parameters=("zero_sign",),
    hypotheses=lambda p: [hyp("positive", zero_sign="positive"), hyp("ieee", zero_sign="ieee")],
    applies=not_fp64,
)
