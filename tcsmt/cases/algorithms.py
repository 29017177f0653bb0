"""Error-corrected single-precision products on half-precision tensor cores,
written once over the bit-vector vocabulary: Markidis et al. (2018) and
Ootomo & Yokota (2022), as VLPG (seed 000, section 6) compares them.

One output element: d = c + sum_i a_i * b_i with a_i, b_i and c binary32
values. Both methods split each binary32 input x into a binary16 value and a
binary16 residual, run the tensor core (``datapath.dot`` with the
architecture's fp16:fp32 model) on the pieces, and combine the partial
results. Every step is a vocabulary function, so the SMT formula, the
Python-int replay of a witness and the printed values are one definition.

Choices, one by one (sources: VLPG section 6 and its Table 5 walk-through;
the VLPG authors' draft smt/markidi.py for facts only; Markidis et al. 2018
eq. 6; Ootomo & Yokota 2022 eq. 24 as VLPG quotes it):

* Conversions binary32 -> binary16 round to nearest even (CUDA's
  __float2half, which both papers use). The draft rounded toward zero; the
  paper does not say. Table 5's inputs are binary16 values, so its finding
  does not depend on this choice.
* Residuals are computed on the CUDA cores in binary32, rounded to nearest
  even: r = fp32(x - fp32(x16)). The subtraction is exact for these inputs.
  Markidis: dx = fp16(r). Ootomo-Yokota: dx = fp16(r * 2^11) (the product
  by 2^11 is exact in binary32).
* Markidis (eq. 6: AB = A16 B16 + dA B16 + A16 dB + dA dB): four chained
  tensor-core calls, c accumulated inside the tensor core:
  d1 = TC(A16, B16, c), d2 = TC(dA, B16, d1), d3 = TC(A16, dB, d2),
  d4 = TC(dA, dB, d3); the result is d4 (the draft's order).
* Ootomo-Yokota (eq. 24, the dA dB term dropped): the products on the
  tensor core from a zero accumulator, the accumulation outside it with
  binary32 round-to-nearest additions (the draft's structure: the two
  correction products chained in one accumulator, as in O-Y's listing):
  P = TC(A16, B16, +0), Q = TC(A16, dB, TC(dA, B16, +0)),
  d = fp32(c + fp32(P + fp32(Q * 2^-11))): the product first, then c, as
  the Table 5 walk-through adds c last, outside the tensor core.
* One tensor-core call covers all k <= 16 terms (one wmma k-step of 16,
  the shape both papers use); the model's blocks chain inside it.
* The reference ("true") is the exact value of c + sum a_i b_i. In the
  domain every binary32 product is exact in binary64, and the binary64
  dot product (the ampere-fp64 model, an FMA chain) is reported beside it;
  each witness is checked against both.
* The question: |Ootomo-Yokota - true| > |Markidis - true|. With M and O
  the two results it holds exactly when M != O and true lies on M's side
  of (M + O) / 2, i.e. the sign of 2 true - M - O, summed exactly
  (``exact_sign``).
* Inputs: a_i and b_i finite, zero or of exponent -15..14 (VLPG: "2^-15 and
  2^14", Ootomo-Yokota's Type 1 range); c any finite binary32 (Table 5 has
  c = 2^-24, outside that range).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from tcsmt import datapath
from tcsmt.datapath import Fixed, Term, bv
from tcsmt.model.choose import choose
from tcsmt.model.formats import get_format
from tcsmt.model.params import ModelParams
from tcsmt.search.domain import Domain

F32, F16, F64 = get_format("float32"), get_format("float16"), get_format("float64")
METHODS = ("markidis", "ootomo-yokota")
SCALE_BITS = 11                 # Ootomo-Yokota's residual scaling 2^11
DOMAIN = Domain(exp_range=(-15, 14))
# The exact sum's register: lowest bit 2^-149 (binary32's), sums below 2^131
# (twice a binary32 c, twice k <= 16 products below 2^30 each, two binary32
# results), one sign bit and two spare bits.
EXACT_LSB = -149
EXACT_WIDTH = 131 - EXACT_LSB + 3


@dataclass
class Setup:
    """The models one comparison runs on: the tensor core, and the binary32
    CUDA cores (IEEE additions, exact products for the reference sum)."""
    tc: ModelParams
    simt: ModelParams
    ew: int


def setup(tc: ModelParams) -> Setup:
    """The exponent width holds every exponent and shift of the exact sum
    (at most about 600 in magnitude) and of the tensor-core model."""
    if (tc.fin.name, tc.fc.name, tc.fout.name) != ("float16", "float32", "float32"):
        raise ValueError(f"{tc.name} is not an fp16-input, fp32-accumulate model")
    simt = tc.replace(name="fp32-cuda-cores", overflow="ieee", zero_sign="ieee",
                      subnormals="keep", product_alignment="raw", product_overflow="keep",
                      product_rounding="exact")
    return Setup(tc, simt, max(datapath.exp_width(tc), 12))


def reference_model() -> ModelParams:
    return choose("ampere-fp64")


# ---------------------------------------------------------------------------
# Binary32 steps on the CUDA cores
# ---------------------------------------------------------------------------

def term(I, s: Setup, fmt, bits) -> Term:
    return datapath.unpack(I, fmt, bits, s.ew, False)


def negated(I, t: Term) -> Term:
    return Term(I.not_(t.sign), t.exp, t.sig, t.frac, t.nan, t.inf, t.lead)


def round_to(I, s: Setup, t: Term, fmt, shift: int = 0):
    """t * 2^shift rounded to nearest even into fmt (bits)."""
    x = datapath.term_fixed(I, t, s.ew)
    if shift:
        x = Fixed(x.sign, x.mag, I.add(x.scale, bv.sconst(I, shift, s.ew)), x.nan, x.inf,
                  x.inf_sign, x.neg_zeros, x.pos_zeros)
    return datapath.round_fixed(I, x, fmt, "rne", s.ew, s.simt.overflow, s.simt.zero_sign, False)


def add32(I, s: Setup, x, y):
    """One binary32 addition rounded to nearest even (bits in, bits out)."""
    return datapath.add_ieee(I, s.simt, term(I, s, F32, x), term(I, s, F32, y), F32, "rne", s.ew)


def split(I, s: Setup, x32, scale: int):
    """binary32 bits -> (x16, residual16): x16 = fp16(x), the residual
    fp16(fp32(x - fp32(x16)) * 2^scale)."""
    x16 = round_to(I, s, term(I, s, F32, x32), F16)
    back = round_to(I, s, term(I, s, F16, x16), F32)
    r32 = datapath.add_ieee(I, s.simt, term(I, s, F32, x32), negated(I, term(I, s, F32, back)),
                            F32, "rne", s.ew)
    return x16, round_to(I, s, term(I, s, F32, r32), F16, scale)


def tensor_core(I, s: Setup, a16: list, b16: list, c32):
    return datapath.dot(I, s.tc, a16, b16, c32)


# ---------------------------------------------------------------------------
# The two methods
# ---------------------------------------------------------------------------

@dataclass
class Pieces:
    """The tensor-core operands of one method: binary16 values and residuals."""
    a16: list
    da: list
    b16: list
    db: list


def pieces(I, s: Setup, a: list, b: list, scale: int) -> Pieces:
    sa = [split(I, s, x, scale) for x in a]
    sb = [split(I, s, y, scale) for y in b]
    return Pieces([x for x, _ in sa], [r for _, r in sa], [y for y, _ in sb], [r for _, r in sb])


def markidis_tc(I, s: Setup, q: Pieces, c):
    """Markidis et al.: four chained tensor-core calls, c inside (bits)."""
    d = tensor_core(I, s, q.a16, q.b16, c)
    d = tensor_core(I, s, q.da, q.b16, d)
    d = tensor_core(I, s, q.a16, q.db, d)
    return tensor_core(I, s, q.da, q.db, d)


def ootomo_yokota_tc(I, s: Setup, q: Pieces, c):
    """Ootomo and Yokota: dA dB dropped, products from a zero accumulator,
    accumulation outside with binary32 RN additions (bits)."""
    zero = I.const(0, 32)
    p = tensor_core(I, s, q.a16, q.b16, zero)
    corr = tensor_core(I, s, q.a16, q.db, tensor_core(I, s, q.da, q.b16, zero))
    corr = round_to(I, s, term(I, s, F32, corr), F32, -SCALE_BITS)
    return add32(I, s, c, add32(I, s, p, corr))


def markidis(I, s: Setup, a: list, b: list, c):
    return markidis_tc(I, s, pieces(I, s, a, b, 0), c)


def ootomo_yokota(I, s: Setup, a: list, b: list, c):
    return ootomo_yokota_tc(I, s, pieces(I, s, a, b, SCALE_BITS), c)


METHOD_FUNCTIONS = {"markidis": markidis, "ootomo-yokota": ootomo_yokota}


# ---------------------------------------------------------------------------
# The exact reference and the error comparison
# ---------------------------------------------------------------------------

def doubled(I, s: Setup, t: Term) -> Term:
    return Term(t.sign, I.add(t.exp, bv.sconst(I, 1, s.ew)), t.sig, t.frac, t.nan, t.inf, t.lead)


def exact_terms(I, s: Setup, ta: list[Term], tb: list[Term], c) -> list[Term]:
    """c and every exact product a_i * b_i, as Terms (from unpacked a and b)."""
    prods = [datapath.multiply(I, x, y, s.simt, s.ew) for x, y in zip(ta, tb)]
    return [term(I, s, F32, c)] + prods


def inputs32(I, s: Setup, a: list, b: list) -> tuple[list[Term], list[Term]]:
    return [term(I, s, F32, x) for x in a], [term(I, s, F32, y) for y in b]


def exact_fixed(I, s: Setup, terms: list[Term]):
    """The exact sum of the terms as a signed EXACT_WIDTH-bit word in units
    of 2^EXACT_LSB: every term is shifted into place by its own exponent
    (a Kulisch accumulator). Exact for the terms this module sums: binary32
    values (lowest bit 2^-149), exact products of domain inputs (2^-76),
    doubled; magnitudes below 2^131 in all."""
    total = I.const(0, EXACT_WIDTH)
    for t in terms:
        shift = I.sub(t.exp, bv.sconst(I, t.frac + EXACT_LSB, s.ew))
        x = bv.shl_by(I, bv.resize_u(I, t.sig, EXACT_WIDTH), shift)
        total = I.add(total, bv.neg_if(I, t.sign, x))
    return total


def exact_sign(I, s: Setup, terms: list[Term], m, o):
    """(negative, zero) of 2 * (sum of terms) - m - o, exactly."""
    both = [doubled(I, s, t) for t in terms]
    both += [negated(I, term(I, s, F32, m)), negated(I, term(I, s, F32, o))]
    total = exact_fixed(I, s, both)
    return bv.msb(I, total), bv.is_zero(I, total)


def equals_exactly(I, s: Setup, terms: list[Term], value32):
    """sum of terms == value32 (binary32 bits), exactly."""
    return bv.is_zero(I, exact_fixed(I, s, terms + [negated(I, term(I, s, F32, value32))]))


def finite32(I, s: Setup, x):
    t = term(I, s, F32, x)
    return I.not_(I.or_(t.nan, t.inf))


def ootomo_worse(I, s: Setup, terms: list[Term], m, o):
    """|o - true| > |m - true| for finite binary32 results m and o, where
    true is the sum of ``terms`` (exact_terms)."""
    from tcsmt.search.monotonic import float_lt
    neg, zero = exact_sign(I, s, terms, m, o)
    pos = I.and_(I.not_(neg), I.not_(zero))
    return I.and_(finite32(I, s, m), finite32(I, s, o),
                  I.or_(I.and_(float_lt(I, F32, m, o), neg), I.and_(float_lt(I, F32, o, m), pos)))


# ---------------------------------------------------------------------------
# Concrete evaluation (for printing and for checking witnesses)
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Evaluation:
    true: Fraction | float    # exact c + sum a_i b_i (a float: infinite or NaN)
    binary64: int             # the ampere-fp64 model's bits
    results: dict[str, int]   # method -> binary32 bits
    worse_by_vocabulary: bool # ootomo_worse with the Python-int interpretation

    def error(self, method: str) -> Fraction | float:
        return _distance(F32.value(self.results[method]), self.true)

    def error64(self, method: str) -> Fraction | float:
        return _distance(F32.value(self.results[method]), F64.value(self.binary64))


def _distance(x: Fraction | float, y: Fraction | float) -> Fraction | float:
    """|x - y|: exact for two finite values; a float where one is infinite or NaN."""
    if isinstance(x, Fraction) and isinstance(y, Fraction):
        return abs(x - y)
    return abs(float(x) - float(y))


def evaluate(tc: ModelParams, a: list[int], b: list[int], c: int) -> Evaluation:
    """Both methods, the references and the question on concrete bits."""
    from tcsmt.interp.ints import INT
    from tcsmt.sim.dot import dot_bits
    s = setup(tc)
    w = lambda v: INT.const(v, 32)  # noqa: E731
    aw, bw, cw = [w(x) for x in a], [w(y) for y in b], w(c)
    res = {name: fn(INT, s, aw, bw, cw).v for name, fn in METHOD_FUNCTIONS.items()}
    terms = exact_terms(INT, s, *inputs32(INT, s, aw, bw), cw)
    worse = ootomo_worse(INT, s, terms, w(res["markidis"]), w(res["ootomo-yokota"])).b
    true = F32.value(c) + sum(F32.value(x) * F32.value(y) for x, y in zip(a, b))
    to64 = lambda x: F64.round_value(F32.finite_value(x), "rne")  # noqa: E731  (exact)
    ref = dot_bits(reference_model(), [to64(x) for x in a], [to64(y) for y in b], to64(c))
    return Evaluation(true, ref, res, worse)
