"""NaN and infinity handling: overflow of a truncated result to infinity
(as published simulators convert) or to the largest finite number (IEEE
round toward zero); products beyond binary32's range kept (NVIDIA) or
turned into infinities (AMD). Inputs may be infinite or NaN."""

from tcsmt.properties.registry import Domain, Property, hyp, not_fp64


def hypotheses(p):
    return [hyp(f"overflow={o},product_overflow={q}", overflow=o, product_overflow=q)
            for o in ("inf", "ieee") for q in ("keep", "inf")]


PROPERTY = Property(
    name="nan-inf",
    description="overflow to infinity vs the largest finite number; products beyond range kept vs infinite",
    parameters=("overflow", "product_overflow"),
    hypotheses=hypotheses,
    domain=lambda p: Domain(finite=False),
    applies=not_fp64,
)
