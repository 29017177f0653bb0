"""Extra fraction bits kept below the accumulator's last bit when terms are
aligned: 0 on Volta, 1 on Turing/Ampere/Ada, 2 on Hopper/Blackwell (F21,
KM-TC)."""

from tcsmt.properties.registry import Property, aligns, hyp

PROPERTY = Property(
    name="align-bits",
    description="alignment bits kept below the accumulator's last bit: 0, 1, 2, 3",
    parameters=("align_bits",),
    hypotheses=lambda p: [hyp(str(n), align_bits=n) for n in (0, 1, 2, 3)],
    applies=aligns,
)
