"""Rounding of the block result to the output format (rz, rne, ru, rd),
with the rest of the datapath as shipped (VLPG property 2; F21: fp32 output
truncates, fp16 output rounds to nearest even)."""

from tcsmt.properties.registry import Property, hyp, not_fp64

PROPERTY = Property(
    name="final-rounding",
    description="rounding of the final result to the output format: rz, rne, ru, rd",
    parameters=("final_rounding",),
    hypotheses=lambda p: [hyp(m, final_rounding=m) for m in ("rz", "rne", "ru", "rd")],
    applies=not_fp64,
)
