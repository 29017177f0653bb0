"""The floor of the alignment exponent that published models need for
tiny (subnormal-range) products: the model's value against none."""

from tcsmt.properties import Property, hyp


def applies(p):
    if p.min_exponent is None:
        return "the model has no alignment floor"
    return None


PROPERTY = Property(
    name="alignment-floor",
    description="floor of the alignment exponent: the model's value vs none",
    parameters=("min_exponent",),
    hypotheses=lambda p: [hyp(str(p.min_exponent), min_exponent=p.min_exponent),
                          hyp("none", min_exponent=None)],
    applies=applies,
)
