"""How the block's sum is rounded: truncation of the aligned terms (what
tensor cores do) against IEEE round-toward-zero, to-nearest-even, up and
down of the exact sum. Truncation and RZ differ only on effective
subtraction (VLPG section 4.2): 2 + (-2^-40) truncates to 2, RZ gives 2-2^-23."""

from tcsmt.properties.registry import Property, hyp, not_fp64


def hypotheses(p):
    own = hyp(p.align_rounding)   # the model as shipped (truncated terms on tensor cores)
    return [own] + [hyp(m, align_rounding=m, final_rounding=m) for m in ("rz", "rne", "ru", "rd")
                    if m != p.align_rounding]


PROPERTY = Property(
    name="rounding",
    description="truncation of aligned terms vs IEEE rz/rne/ru/rd of the exact sum",
    parameters=("align_rounding", "final_rounding"),
    hypotheses=hypotheses,
    applies=not_fp64,
)
