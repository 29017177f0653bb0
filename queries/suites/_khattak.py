"""Instances of the parametric test vectors of Khattak and Mikaitis (seed
003), for _build.py.

The paper gives each test as formulas in p_in and p_out (significand bits
of the input and output formats, hidden bit included), N_FMA (products per
block), n_eab (extra alignment bits), a free exponent j and, for the
normalisation test, t. It states the product r_i = a_i*b_i of each term;
a_i and b_i are those of the authors' CUDA programs where the product
splits that way (RTX_FP16.cu of github.com/faiziktk/IEEE_HPEC2025_block_FMA_tests),
else a power of two times the rest. Expectations are what the paper's
formulas give for the features its Table I and Section IV report for the
RTX 3060 (Ampere) and the RTX 1000 Ada; each claim's basis says which.
"""

from __future__ import annotations

import functools
from fractions import Fraction

from tcsmt.errors import UserError
from tcsmt.model.exact import parse_exact
from tcsmt.model.formats import get_format
from tcsmt.queries.suites._build import GROUPS, claim, vector
from tcsmt.queries.suites._build import suite as suite_dict
from tcsmt.sim.dot import to_bits

SOURCE = ('F. A. Khattak, M. Mikaitis, "Generalized methodology for determining numerical '
          'features of hardware floating-point matrix multipliers: Part I", IEEE HPEC 2025 '
          '(seed 003); test vectors of Section III (A to F, Algorithm 1), results of Table I '
          'and Section IV; code github.com/faiziktk/IEEE_HPEC2025_block_FMA_tests')
DEVICES = ["RTX 3060", "RTX 1000 Ada"]
NEAB = 1          # Table I: one extra alignment bit, every format, both cards
T = 3             # the paper's t for the normalisation test (t >= 3; the code's value)

# group, p_in, p_out, N_FMA, devices with published results
CONFIGS = [
    ("fp16-fp32", 11, 24, 8, DEVICES),
    ("bf16-fp32", 8, 24, 8, DEVICES),
    ("tf32-fp32", 11, 24, 4, DEVICES),
    ("fp16-fp16", 11, 11, 8, DEVICES),
    ("e4m3-fp32", 4, 24, 16, []),
    ("e5m2-fp32", 3, 24, 16, []),
]
FP8_NOTE = ("The paper publishes no fp8 result; it says the method applies to 8-bit formats "
            "unchanged. N_FMA = 16 for fp8 on Ada is from FACTS.md (KM-TC), not this paper.")


def powers(v: Fraction) -> str:
    """An exact value as a sum of powers of two ("2^-25 + 2^-26")."""
    if v == 0:
        return "0"
    sign, v = ("-", -v) if v < 0 else ("", v)
    terms = []
    while v:
        e = v.numerator.bit_length() - v.denominator.bit_length()
        if Fraction(2) ** e > v:
            e -= 1
        terms.append(f"2^{e}")
        v -= Fraction(2) ** e
    body = " + ".join(terms)
    return f"{sign}({body})" if sign and len(terms) > 1 else sign + body


@functools.cache
def fits(fmt_name: str, v: Fraction) -> bool:
    try:
        to_bits(get_format(fmt_name), v)
        return True
    except UserError:
        return False


def split(fin: str, a: str, b: str) -> tuple[str, str] | None:
    """(a, b) as written if both fit the input format, else a split of the
    product with b an odd number times a power of two (smallest first),
    else None."""
    if fits(fin, parse_exact(a)) and fits(fin, parse_exact(b)):
        return a, b
    r = parse_exact(a) * parse_exact(b)
    fmt = get_format(fin)
    exps = sorted(range(fmt.emin - fmt.frac_bits, fmt.emax + 1), key=abs)
    for m in range(1, 1 << fmt.precision, 2):      # b = m * 2^e, m odd
        for e in exps:
            y = m * Fraction(2) ** e
            if fits(fin, y) and fits(fin, r / y):
                return powers(r / y), powers(y)
    return None


def build(gid: str, group: str, make, k: int, devices, scaled: bool, **kw):
    """The vector ``make(s)`` gives at the smallest s >= 0 (the paper's j,
    or a scale 2^s of every value when ``scaled``) at which every product
    splits into two input values. ``make(s)`` returns (pairs by position,
    c, claims, description)."""
    fin, fc, _ = GROUPS[group]
    for s in range(0, 40):
        pairs, c, claims, desc = make(s)
        done = {i: split(fin, a, b) for i, (a, b) in pairs.items()}
        if all(done.values()) and fits(fc, parse_exact(c)):
            break
    else:
        raise ValueError(f"{gid}: no scale makes the products {group} products")
    a = ["0"] * k
    b = ["0"] * k
    for i, (x, y) in done.items():
        a[i], b[i] = x, y
    note = kw.pop("note", "")
    if s and scaled:
        note = (note + " " if note else "") + (
            f"Every value is the paper's times 2^{s}, so that the products are {group[:4]} products.")
    if not devices and group.startswith("e"):
        note = (note + " " if note else "") + FP8_NOTE
    return vector(f"{group}.{gid}", group, desc, a, b, c, claims, k=k, note=note, **kw)


def sc(text: str, s: int) -> str:
    """A value of the paper times 2^s."""
    if s == 0:
        return text
    return p2(s) if text == "1" else f"2^{s}*({text})"


def p2(e: int) -> str:
    """2^e, written 1 for e = 0."""
    return "1" if e == 0 else f"2^{e}"


def neg(text: str) -> str:
    return f"-({text})" if any(ch in text[1:] for ch in " +-*") else f"-{text}"


def signed(sign: str, text: str) -> str:
    return neg(text) if sign else text


def dev(devices, value) -> dict:
    return {d: value for d in devices}


def alignment_vectors(group: str, po: int, devices) -> list:
    """III-C1: one and two extra alignment bits."""
    sec = "III-C1 Bits for significand alignment"

    def one(j):
        r = f"2^{-po + j}"
        return ({0: (r, "1"), 1: (r, "1")}, p2(j),
                [claim("extra alignment bits", "align_bits",
                       f"d = {p2(j)} + 2^{-po + 1 + j} shows at least one extra alignment bit; "
                       f"without one both {r} products are lost and d = {p2(j)}",
                       dev(devices, f"{p2(j)} + 2^{-po + 1 + j}"),
                       basis="Table I: n_eab = 1, so this test passed")],
                f"c = 2^j, r1 = r2 = 2^(-p_out + j); j = {j}")

    def two(j):
        r1, r2 = f"2^{-po + j}", f"2^{-po + j - 1}"
        want = f"{p2(j)} + 2^{-po + 1 + j}"
        return ({0: (r1, "1"), 1: (r1, "2^-1"), 2: (r1, "2^-1")}, p2(j),
                [claim("extra alignment bits", "align_bits",
                       f"d = {want} would show two extra alignment bits (the two {r2} "
                       f"products kept); with one they are lost",
                       relation={"op": "!=", "value": want, "devices": devices} if devices else None,
                       basis="Table I: n_eab = 1, not 2, so this test failed")],
                f"c = 2^j, r1 = 2^(-p_out + j), r2 = r3 = 2^(-p_out + j - 1); j = {j}")

    return [build("align-1bit", group, one, 2, devices, False, section=sec),
            build("align-2bits", group, two, 3, devices, False, section=sec)]


def rounding_vectors(group: str, po: int, devices, out16: bool) -> list:
    """III-B: rounding after alignment (binary32 output only) and the
    final rounding of a block, on both semi-axes."""
    sec = "III-B Rounding modes"
    out = []
    for sign in ("", "-"):
        def after_align(j, sign=sign):
            c = signed(sign, p2(j))
            rne = signed(sign, f"{p2(j)} + 2^{-po + j + 2 - NEAB}")
            pair = (signed(sign, f"2^{-po + j}"), f"2^{-NEAB} + 2^{-NEAB - 1}")
            return ({0: pair, 1: pair}, c,
                    [claim("rounding after alignment", "align_rounding",
                           f"d = {c}: bits beyond the extra alignment bit are truncated; round to "
                           f"nearest gives {rne}, RU and RD that on one semi-axis only",
                           dev(devices, c),
                           basis="Section IV-B and Table I: truncation in a block FMA; n_eab = 1")],
                    f"c = {sign or '+'}2^j, r1 = r2 = {sign or '+'}(2^(-p_out + j - n_eab) + "
                    f"2^(-p_out + j - n_eab - 1)), n_eab = {NEAB}; j = {j}")

        def final(j, sign=sign):
            c = signed(sign, f"{p2(j)} + 2^{-po + j + 1} + 2^{-po + j + 2}")
            trunc = signed(sign, f"2^{j + 2}")
            rne = signed(sign, f"2^{j + 2} + 2^{-po + j + 3}")
            want, basis = ((rne, "Table I note: binary16 output rounds to nearest (RM-BFMA)")
                           if out16 else (trunc, "Table I: RM-BFMA truncate (binary32 output)"))
            return ({i: (signed(sign, p2(j)), "1") for i in range(3)}, c,
                    [claim("rounding of a block's result", "final_rounding",
                           f"d = {trunc} for truncation (RZ), {rne} for round to nearest even; "
                           f"RU and RD give one of them on each semi-axis",
                           dev(devices, want), basis=basis)],
                    f"c = {sign or '+'}(2^j + 2^(-p_out + j + 1) + 2^(-p_out + j + 2)), "
                    f"r1 = r2 = r3 = {sign or '+'}2^j; j = {j}, p_out = {po}")

        name = "pos" if not sign else "neg"
        if not out16:
            out.append(build(f"round-after-align-{name}", group, after_align, 2, devices, False,
                             section=sec))
        out.append(build(f"round-block-{name}", group, final, 3, devices, False, section=sec))
    return out


def normalisation_vectors(group: str, po: int, devices) -> list:
    """III-C2: the {ecb, eab} = {1, 0} and {1, 1} tests."""
    sec = "III-C2 Normalisation"

    def ten(s):
        r = sc(f"2^{-po + 1}", s)
        return ({i: (r, "1") for i in range(3)}, sc(f"2 - 2^{-po + 1}", s),
                [claim("normalisation after each addition", "normalisation",
                       f"d = {sc('2', s)} if each addition is normalised at once (addends aligned "
                       f"to the largest); kept carries give {sc(f'2 + 2^{-po + 2}', s)}", {},
                       basis="the paper ran the {1, 1} test on the cards (IV-C3); no output "
                             "of this one is published")],
                "c = 2 - 2^(-p_out + 1), r1 = r2 = r3 = 2^(-p_out + 1) (case {ecb, eab} = {1, 0})")

    def eleven(s):
        r = sc(f"2^{-po + T} + 2^{-po}", s)
        late = sc(f"1 + 2^{-po + T} + 2^{-po + 1}", s)
        return ({0: (r, "1"), 1: (r, "1")}, sc(f"1 - 2^{-po + T}", s),
                [claim("normalisation after each addition", "normalisation",
                       f"d = {late}: no immediate normalisation; immediate normalisation gives "
                       f"{sc(f'1 + 2^{-po + T}', s)} (RZ, RD, RNE, truncation) or "
                       f"{sc(f'1 + 2^{-po + T} + 2^{-po + 2}', s)} (RU)",
                       dev(devices, late), basis="Section IV-C3: no immediate normalisation")],
                f"c = 1 - 2^(-p_out + t), r1 = r2 = 2^(-p_out + t) + 2^(-p_out), t = {T} "
                f"(case {{ecb, eab}} = {{1, 1}})")

    return [build("normalise-ecb1-eab0", group, ten, 3, devices, True, section=sec),
            build("normalise-ecb1-eab1", group, eleven, 2, devices, True, section=sec)]


def algorithm1_vectors(group: str, pi: int, po: int, nfma: int, devices) -> list:
    """Algorithm 1 (III-C3, III-D): for k = 2, 3, ... the first step tells
    whether k products are still one block; the second counts carry bits."""
    sec = "III-C3 and III-D: Algorithm 1 (carry bits and FMA size)"
    out = []
    for k in range(2, nfma + 2):
        for sign in ("", "-"):
            def step_a(s, k=k, sign=sign):
                total = signed(sign, sc(f"2 + 2^{-po + 2}", s))
                if k <= nfma:
                    cl = claim("block size (N_FMA)", "block_size",
                               f"|d| = |c + r1 + rk| = {sc(f'2 + 2^{-po + 2}', s)}: all {k} products "
                               f"are in one block", dev(devices, total),
                               basis=f"Table I: N_FMA = {nfma}, so the loop went on at k = {k}")
                else:
                    cl = claim("block size (N_FMA)", "block_size",
                               f"|d| != {sc(f'2 + 2^{-po + 2}', s)}: product {k} falls in the next "
                               f"block, so N_FMA = {k - 1}", {},
                               relation={"op": "!=", "value": total, "devices": devices} if devices
                               else None,
                               basis=f"Table I: N_FMA = {nfma}, so the loop stopped at k = {k}")
                return ({0: (signed(sign, sc("1", s)), "1"),
                         k - 1: (signed(sign, sc(f"2^{-po + 1}", s)), "1")},
                        signed(sign, sc(f"1 + 2^{-po + 1}", s)), [cl],
                        f"first step, k = {k}: r1 = {sign or '+'}1, r{k} = {sign or '+'}2^(-p_out + 1), "
                        f"the others 0, c = {sign or '+'}(1 + 2^(-p_out + 1))")
            out.append(build(f"alg1-size-k{k}-{'neg' if sign else 'pos'}", group, step_a, k,
                             devices, True, section=sec))
    for k in range(2, nfma + 1):
        def step_b(s, k=k):
            big = sc(f"2 - 2^{-pi + 1}", s)
            logk = (k - 1).bit_length()               # ceil(log2 k)
            c = sc(f"2 - 2^{-pi + 1} + " + " + ".join(f"2^{-po + i}" for i in range(1, logk + 1)), s)
            exact = parse_exact(c) + (k - 1) * parse_exact(big) + parse_exact(sc(f"2^{-po + 1}", s))
            n = (k * (2 - Fraction(2) ** (-pi + 1))).__floor__().bit_length() - 1
            pairs = {i: (big, "1") for i in range(k - 1)}
            pairs[k - 1] = (sc(f"2^{-po + 1}", s), "1")
            return (pairs, c,
                    [claim("extra carry bits", "carry_bits",
                           f"d = c + sum r (exact, "
                           f"{powers(exact) if exact.denominator == 1 else exact_text(exact)}) "
                           f"counts floor(log2(k(2 - 2^(1 - p_in)))) = {n} extra carry bits", {},
                           basis="Table I reports n_ecb >= 3 (>= 2 for tf32), the count eq. (4) "
                                 "gives at k = N_FMA; which k passed is not published (the "
                                 "authors' program computes n_ecb by eq. (4) without running "
                                 "this step), so no output is expected")],
                    f"second step, k = {k}: r1..r{k - 1} = 2 - 2^(1 - p_in), r{k} = 2^(1 - p_out), "
                    f"c = 2 - 2^(1 - p_in) + sum of 2^(-p_out + i), i = 1..ceil(log2 k)")
        out.append(build(f"alg1-carry-k{k}", group, step_b, k, devices, True, section=sec))
    return out


def exact_text(v: Fraction) -> str:
    from tcsmt.model.formats import format_value
    return format_value(v)


def multiblock_vectors(group: str, po: int, nfma: int, devices, out16: bool) -> list:
    """III-E: rounding when two block results combine (product N_FMA + 1
    alone in the second block), both semi-axes; III-F: order of c and two
    block sums (binary32 output only)."""
    out = []
    k = 2 * nfma
    for sign in ("", "-"):
        def make(s, sign=sign):
            trunc = signed(sign, sc(f"1 + 2^{-po + 1}", s))
            rne = signed(sign, sc(f"1 + 2^{-po + 2}", s))
            want, basis = ((rne, "Table I note: binary16 output rounds to nearest (RM-MBFMA)")
                           if out16 else (trunc, "Table I: RM-MBFMA truncate (binary32 output)"))
            return ({nfma: (signed(sign, sc(f"2^{-po}", s)), "1.5")},
                    signed(sign, sc(f"1 + 2^{-po + 1}", s)),
                    [claim("rounding between blocks", "final_rounding",
                           f"d = {trunc} for truncation (RZ), {rne} for round to nearest even; "
                           f"RU and RD one of them on each semi-axis (each block's result is "
                           f"rounded, then the next block adds to it)", dev(devices, want),
                           basis=basis)],
                    f"c = {sign or '+'}(1 + 2^(-p_out + 1)), r{nfma + 1} = {sign or '+'}"
                    f"(2^(-p_out) + 2^(-p_out - 1)), the others 0; k = 2 N_FMA = {k}")
        out.append(build(f"round-between-blocks-{'neg' if sign else 'pos'}", group, make, k,
                         devices, True, section="III-E Rounding mode in compiling results of "
                                                "multiple block FMAs"))
    if out16:
        return out

    def order(j):
        t2 = f"2^{-po - 3 + j}"
        return ({0: (neg(p2(j)), "1"), nfma: (t2, "1")}, p2(j),
                [claim("order of c and the block sums", "chaining",
                       f"d = {t2} for (c + T1) + T2 (each block's result is the next block's c); "
                       f"c + (T1 + T2) and (c + T2) + T1 give 0", dev(devices, t2),
                       basis="Section IV-D: the order is (c + T1) + T2")],
                f"c = 2^j, T1 = r1 = -2^j, T2 = r{nfma + 1} = 2^(-p_out - 3 + j); k = {k}; j = {j}")
    out.append(build("block-order", group, order, k, devices, False,
                     section="III-F Normalisation procedure and order of addition between two "
                             "block FMAs"))
    return out


SUBNORMAL = {   # group: [(a, b, d)], the tests of Fasi et al. the paper reapplies
    "fp16-fp32": [("2^-24", "4", "2^-22"), ("2^-14", "2^-1", "2^-15")],
    "fp16-fp16": [("2^-24", "4", "2^-22"), ("2^-14", "2^-1", "2^-15")],
    "bf16-fp32": [("2^-133", "2^7", "2^-126"), ("2^-126", "2^-1", "2^-127")],
    "tf32-fp32": [("2^-136", "2^10", "2^-126"), ("2^-126", "2^-1", "2^-127")],
}


def subnormal_vectors(group: str, devices) -> list:
    out = []
    for (a, b, d), name in zip(SUBNORMAL.get(group, []), ("input", "output")):
        out.append(vector(
            f"{group}.subnormal-{name}", group,
            f"a1 = {a}, b1 = {b}, c = 0 (Fasi et al.'s test of a subnormal {name})", [a], [b], "0",
            section="III-A Subnormal support",
            claims=[claim(f"subnormal {name}s", "subnormals",
                          f"d = {d}: subnormal {name}s are kept (flushing gives 0)",
                          dev(devices, d),
                          basis="Section IV-A: subnormal inputs and outputs are supported")]))
    return out


def suite() -> dict:
    vectors = []
    for group, pi, po, nfma, devices in CONFIGS:
        out16 = GROUPS[group][2] == "float16"
        vectors += subnormal_vectors(group, devices)
        if not out16:
            vectors += alignment_vectors(group, po, devices)
        vectors += rounding_vectors(group, po, devices, out16)
        if not out16:
            vectors += normalisation_vectors(group, po, devices)
            vectors += algorithm1_vectors(group, pi, po, nfma, devices)
        vectors += multiblock_vectors(group, po, nfma, devices, out16)
    return suite_record(vectors)


def suite_record(vectors: list) -> dict:
    return suite_dict(
        "khattak-mikaitis", "Khattak and Mikaitis: parametric test vectors, RTX 3060 and RTX 1000 Ada",
        SOURCE,
        "The paper's parametric vectors instantiated for each format pair it uses: p_in = 11 "
        "(binary16, TensorFloat-32), 8 (bfloat16), 4 (e4m3), 3 (e5m2); p_out = 24 (binary32 "
        "output), 11 (binary16 output, rounding tests only, as the paper's Table I note and "
        "code do); N_FMA = 8 (binary16, bfloat16), 4 (TensorFloat-32) from Table I; n_eab = 1; "
        "j = 0 unless the products need a larger one. k is the number of products the test "
        "uses (2 N_FMA where two blocks are needed). Expected outputs are for both cards "
        "(Table I gives them the same features); the paper reports features, so each output is "
        "the one its formula gives for the reported feature.",
        vectors)
