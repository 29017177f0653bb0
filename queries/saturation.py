"""What an integer instruction's s32 result does past the s32 range:
wraps modulo 2^32 (mma without .satfinite) or saturates (.satfinite),
clamped once on the exact sum (sf-tensor's B200 reading) or after every
addition, c first (a reading of PTX's "the accumulated value is limited").
Integer models only (s8, u8, s4, u4 inputs; s32 c and d)."""

from tcsmt.properties.registry import Property, hyp, integer

READINGS = {"wrap": {"overflow": "wrap"},
            "saturate-final": {"overflow": "saturate", "saturation": "final"},
            "saturate-every-add": {"overflow": "saturate", "saturation": "every_add"}}


def hypotheses(p):
    own = "wrap" if p.overflow == "wrap" else "saturate-" + p.saturation.replace("_", "-")
    return [hyp(own)] + [hyp(label, **ch) for label, ch in READINGS.items() if label != own]


PROPERTY = Property(
    name="saturation",
    description="s32 overflow: wrap modulo 2^32 vs saturate once vs saturate every addition",
    parameters=("overflow", "saturation"),
    hypotheses=hypotheses,
    applies=integer,
    formats="s8:s32",
    integer=True,
)
