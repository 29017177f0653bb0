"""The floor of the alignment exponent that published models need for
tiny (subnormal-range) products: the model's value against none."""

from tcsmt.properties.registry import Property, hyp


def applies(p):
    if p.min_exponent is None:
        return "the model has no alignment floor"
    product = p.fin.emin + p.fb.emin          # raw exponents of products and of c (subnormals at emin)
    lowest = min(product, p.fc.emin)
    if p.c_placement == "global" and lowest > p.min_exponent and p.fc.emin > p.min_exponent:
        return (f"the floor 2^{p.min_exponent} lies below every exponent these formats give "
                f"(products >= 2^{product}, c >= 2^{p.fc.emin}): it cannot change a result")
    return None


PROPERTY = Property(
    name="alignment-floor",
    description="floor of the alignment exponent: the model's value vs none",
    parameters=("min_exponent",),
    hypotheses=lambda p: [hyp(str(p.min_exponent), min_exponent=p.min_exponent),
                          hyp("none", min_exponent=None)],
    applies=applies,
)
