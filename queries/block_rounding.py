"""Rounding inside the block: the aligned terms truncated (no sticky bit)
against the block's sum rounded with an IEEE mode (guard and sticky bits),
the final rounding as shipped. Truncation and rz differ only on effective
subtraction."""

from tcsmt.properties.registry import Property, hyp, not_fp64

PROPERTY = Property(
    name="block-rounding",
    description="rounding inside the block: truncation vs IEEE rz/rne/ru/rd with a sticky bit",
    parameters=("align_rounding",),
    hypotheses=lambda p: [hyp(m, align_rounding=m) for m in ("truncate", "rz", "rne", "ru", "rd")
                          + (("exact",) if p.align_rounding == "exact" else ())],
    applies=not_fp64,
)
