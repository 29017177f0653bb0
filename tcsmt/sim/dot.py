"""Simulating one dot product under a model (the Python-int interpretation).

    >>> from tcsmt import dot, model
    >>> r = dot("ampere", a=[0x3c00, 0x3c00], b=[0x3c00, 0x0001], c=0x3f800000)
    >>> r.hex, r.decimal
    ('0x40000000', '2')
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from tcsmt import datapath
from tcsmt.errors import ShapeError, UserError
from tcsmt.interp.ints import INT, IntBool, IntWord
from tcsmt.model.choose import choose
from tcsmt.model.exact import check_exponents, exact_power
from tcsmt.model.formats import Format, format_value, get_format
from tcsmt.model.params import ModelParams


@dataclass(frozen=True)
class Result:
    bits: int
    format: Format

    @property
    def hex(self) -> str:
        return self.format.hex(self.bits)

    @property
    def value(self) -> Fraction | float:
        return self.format.value(self.bits)

    @property
    def decimal(self) -> str:
        if self.format.is_negative_zero(self.bits):
            return "-0"
        return format_value(self.value)

    @property
    def kind(self) -> str:
        return self.format.classify(self.bits)


model = choose
"""``tcsmt.model(spec, formats, overrides)``: the model record for an
architecture, a model name or file (tcsmt.model.choose.choose)."""


def check_inputs(p: ModelParams, a, b, c) -> tuple[list[int], list[int], int]:
    a, b = [int(x) for x in a], [int(x) for x in b]
    if len(a) != len(b):
        raise ShapeError(f"a has {len(a)} terms and b has {len(b)}: they must match")
    if not a:
        raise ShapeError("a and b need at least one term")
    for name, xs, fmt in (("a", a, p.fin), ("b", b, p.fb), ("c", [int(c)], p.fc)):
        _check_words(name, xs, fmt)
    return a, b, int(c)


def check_scales(p: ModelParams, k: int, sa, sb) -> tuple[list[int] | None, list[int] | None]:
    """The scales of a and b as lists of ints: one per scale_block products
    for a block-scaled model, none otherwise."""
    if p.scale_format is None:
        if sa is not None or sb is not None:
            raise UserError(f"{p.name} has no block scales: leave out the scales of a and b")
        return None, None
    n = p.scale_count(k)
    fs, block = p.scaling()
    if sa is None or sb is None:
        raise UserError(f"{p.name} scales every {block} products: give {n} scale(s) of a "
                        f"and of b ({fs.name})")
    sa, sb = [int(x) for x in sa], [int(x) for x in sb]
    for name, xs in (("scale of a", sa), ("scale of b", sb)):
        if len(xs) != n:
            raise ShapeError(f"{len(xs)} {name} given; {k} products in blocks of {block} "
                             f"need {n}")
        _check_words(name, xs, fs)
    return sa, sb


def check_mask(p: ModelParams, k: int, mask) -> list[int] | None:
    """The mask of a sparse model as a list of 0/1 ints, one per product (a
    dense model takes none)."""
    if p.sparsity == "dense":
        if mask is not None:
            raise UserError(f"{p.name} is dense: leave out the mask")
        return None
    if mask is None:
        raise UserError(f"{p.name} is sparse ({p.sparsity}): give a mask of {k} bits, 1 where "
                        "the metadata selects the product")
    mask = [int(x) for x in mask]
    if len(mask) != k or any(x not in (0, 1) for x in mask):
        raise UserError(f"the mask must be {k} bits (0 or 1), one per product; got {mask}")
    return mask


def _check_words(name: str, xs: list[int], fmt: Format) -> None:
    for x in xs:
        if not 0 <= x < (1 << fmt.bits):
            raise UserError(f"{name} = {x:#x} is not a {fmt.name} bit pattern ({fmt.bits} bits)")


def _word(name: str, fmt: Format, x) -> int:
    """A storage word (tf32 in a binary32 word) as the format's bit pattern."""
    try:
        return fmt.from_storage(int(x))
    except UserError as e:
        raise UserError(f"{name} = {int(x):#x}: {e}") from None


def dot(spec: str | ModelParams, a, b, c, formats: str | None = None,
        overrides: list[str] | None = None, scale_a=None, scale_b=None, mask=None) -> Result:
    """d = c + sum(a_i * b_i) under a model; a, b and c are bit patterns
    (ints) of the model's in_format, b_format and c_format in their storage
    words, as result files, the command line and tcsmt.matmul hold them (tf32
    in a binary32 word whose low 13 bits are zero); for a block-scaled model,
    scale_a and scale_b are the bit patterns of the scales (one per
    scale_block products); for a sparse model, mask holds one bit per
    product (1: the metadata selects it)."""
    p = model(spec, formats, overrides)
    a, b = [_word("a", p.fin, x) for x in a], [_word("b", p.fb, y) for y in b]
    a, b, c = check_inputs(p, a, b, _word("c", p.fc, c))
    sa, sb = (None if s is None else [_word(n, p.fscale, x) if p.fscale else x for x in s]
              for n, s in (("scale of a", scale_a), ("scale of b", scale_b)))
    sa, sb = check_scales(p, len(a), sa, sb)
    return Result(dot_bits(p, a, b, c, sa, sb, check_mask(p, len(a), mask)), p.fout)


def _run(p: ModelParams, a: list[int], b: list[int], c: int, sa=None, sb=None, trace=None,
         mask=None, I=INT):
    def words(xs, bits):
        return None if xs is None else [I.const(x, bits) for x in xs]
    return datapath.dot(I, p, words(a, p.fin.bits), words(b, p.fb.bits), I.const(c, p.fc.bits),
                        trace=trace, sa=words(sa, p.fscale and p.fscale.bits),
                        sb=words(sb, p.fscale and p.fscale.bits), mask=words(mask, 1))


def dot_bits(p: ModelParams, a: list[int], b: list[int], c: int, sa=None, sb=None,
             mask=None, I=INT) -> int:
    """The same as ``dot`` for callers that hold a ModelParams and checked bits
    (``I``: the Python-int interpretation to run, e.g. tcsmt.interp.memo's)."""
    return _run(p, a, b, c, sa, sb, mask=mask, I=I).v


def to_bits(fmt: Format, value) -> int:
    """An exact value (int, Fraction, float, or a string such as '1.5' or
    '2^-24') as fmt's bits; refuses values fmt cannot hold exactly."""
    v = parse_value(value)
    if isinstance(v, float):   # inf or nan
        if v != v:
            return fmt.nan_bits()
        return fmt.inf_bits(1 if v < 0 else 0)
    bits = fmt.round_value(v, "rne")
    if fmt.value(bits) != v:
        raise UserError(f"{value} is not exactly representable in {fmt.name}")
    return bits


def parse_value(value) -> Fraction | float:
    if isinstance(value, Fraction):
        return value
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return value
        return Fraction(value)
    text = str(value).strip().replace(" ", "")
    low = text.lower()
    if low in ("inf", "+inf", "-inf", "nan"):
        return float(low)
    try:
        check_exponents(text)
        if "^" in text or "**" in text:
            return _parse_power(text)
        return Fraction(text)
    except (ValueError, ZeroDivisionError) as e:
        why = f": {e}" if str(e).startswith(("bad power", "decimal exponent")) else ""
        raise UserError(f"{value!r} is not a number{why} (write 1.5, -3/4, 2^-24 or "
                        "1.5*2^-3)") from None


def _parse_power(text: str) -> Fraction:
    sign = Fraction(1)
    if text.startswith("-"):
        sign, text = Fraction(-1), text[1:]
    coef, _, power = text.rpartition("*") if "*2^" in text or "*2**" in text else ("1", "", text)
    power = power.replace("**", "^")
    base, _, exp = power.partition("^")
    if base != "2":
        raise ValueError(text)
    return sign * Fraction(coef or "1") * exact_power(Fraction(2), Fraction(int(exp)))


# ---------------------------------------------------------------------------
# --explain: every stage of the datapath
# ---------------------------------------------------------------------------

def explain(p: ModelParams, a: list[int], b: list[int], c: int, sa=None,
            sb=None, mask=None) -> list[tuple[str, str]]:
    """(stage, text) lines for the last block of the dot product."""
    trace: list = []
    out = _run(p, a, b, c, sa, sb, trace, mask)
    lines: list[tuple[str, str]] = []
    e_max: int | None = None
    for name, obj, kind in trace:
        if kind == "scales":
            lines.append((name, "a " + _term_text(obj[0]) + ", b " + _term_text(obj[1])))
        elif kind == "term":
            lines.append((name, _int_text(obj) if p.fout.is_integer else _term_text(obj)))
        elif kind == "int":
            lines.append((name, str(_signed(obj))))
        elif kind == "signed":
            e_max = _signed(obj)
            lines.append((name, f"2^{e_max} (terms keep {p.F} fraction bits below it)"))
        elif kind.startswith("fixed:"):
            rl = int(kind.split(":")[1])
            assert e_max is not None        # the trace gives the alignment point before the sums
            val = Fraction(_signed(obj)) * Fraction(2) ** (e_max - rl)
            label = name
            if name.startswith("aligned term ") and p.c_placement == "global":
                i = int(name.rsplit(" ", 1)[1])
                term = "group" if p.group_size > 1 else "product"
                label = "aligned c" if i == 0 else f"aligned {term} {i - 1}"
            lines.append((label, f"{format_value(val)}  ({_signed(obj)} x 2^{e_max - rl})"))
            if name == "raw sum" and val != 0:
                e = val.numerator.bit_length() - val.denominator.bit_length()
                e = e - 1 if abs(val) < Fraction(2) ** e else e
                m = abs(val) / Fraction(2) ** e
                lines.append(("normalised", f"{'-' if val < 0 else ''}{format_value(m)} x 2^{e}"))
        elif kind.startswith("bits:"):
            fmt = get_format(kind.split(":", 1)[1]) if not kind.endswith(p.fout.name) else p.fout
            lines.append((name, f"{fmt.hex(obj.v)} = {format_value(fmt.value(obj.v))}"))
    res = Result(out.v, p.fout)
    if p.fout.is_integer:
        how = "modulo 2^32" if p.overflow == "wrap" else f"saturated ({p.saturation})"
        lines.append(("result", f"{res.hex} = {res.decimal} ({p.fout.name}, {how})"))
    else:
        lines.append(("rounded", f"{res.hex} = {res.decimal} ({p.final_rounding} to {p.fout.name})"))
    return lines


def _signed(w: IntWord) -> int:
    return w.v - (1 << w.w) if w.v >> (w.w - 1) else w.v


def _int_text(t: datapath.Term) -> str:
    """An integer product: its value."""
    assert isinstance(t.sign, IntBool) and isinstance(t.sig, IntWord)
    return f"{'-' if t.sign.b and t.sig.v else ''}{t.sig.v} (exact)"


def _term_text(t: datapath.Term) -> str:
    if isinstance(t.nan, IntBool) and t.nan.b:
        return "NaN"
    assert isinstance(t.sign, IntBool) and isinstance(t.inf, IntBool)        # the Python-int run
    assert isinstance(t.exp, IntWord) and isinstance(t.sig, IntWord)
    neg = t.sign.b
    if t.inf.b:
        return "-inf" if neg else "inf"
    e = _signed(t.exp)
    v = Fraction(t.sig.v) * Fraction(2) ** (e - t.frac)
    sig = Fraction(t.sig.v, 1 << t.frac)
    return f"{'-' if neg else ''}{format_value(sig)} x 2^{e} = {format_value(-v if neg else v)} (exact)"


# ---------------------------------------------------------------------------
# The simulate command's document
# ---------------------------------------------------------------------------

def input_bits(fmt: Format, x, name: str) -> int:
    """One input as a bit pattern: an int is one already, in the format's
    storage word (as tcsmt.dot takes it); a string "0x3c00" is a bit
    pattern (no sign: set the sign bit), any other string, float or
    Fraction an exact value (tcsmt.sim.dot.to_bits)."""
    from tcsmt.model.formats import parse_bits
    if isinstance(x, int) and not isinstance(x, bool):
        return fmt.from_storage(x)
    if isinstance(x, str) and x.strip().lower().startswith(("0x", "-0x")):
        if x.strip().startswith("-"):
            raise UserError(f"{name} {x.strip()}: a bit pattern has no sign; set the sign bit")
        return parse_bits(x.strip(), fmt)
    return to_bits(fmt, x)


def _number(fmt: Format, bits: int) -> dict:
    from tcsmt.model.formats import describe
    r = Result(bits, fmt)
    return {"hex": r.hex, "decimal": r.decimal, "text": describe(fmt, bits)}


def simulate_document(p: ModelParams, a: list, b: list, c, scale_a=None, scale_b=None,
                      explain_stages: bool = False, mask=None) -> dict:
    """What ``tcsmt simulate`` prints, as a document (see tcsmt.api.simulate)."""
    if len(a) != len(b):
        raise ShapeError(f"a has {len(a)} terms and b has {len(b)}: they must match")
    a = [input_bits(p.fin, x, "a") for x in a]
    b = [input_bits(p.fb, y, "b") for y in b]
    a, b, c = check_inputs(p, a, b, input_bits(p.fc, c, "c"))
    sa, sb = (None if s is None else [input_bits(p.fscale, x, n) if p.fscale else x for x in s]
              for s, n in ((scale_a, "scale_a"), (scale_b, "scale_b")))
    if p.scale_format is None and (sa or sb):
        raise UserError(f"{p.name} has no block scales: leave out the scales of a and b")
    sa, sb = check_scales(p, len(a), sa, sb)
    mask = check_mask(p, len(a), mask)
    r = Result(dot_bits(p, a, b, c, sa, sb, mask), p.fout)
    doc = {"model": p.name,
           "summary": {"formats": [p.in_format, p.fb.name, p.c_format, p.out_format],
                       "block_size": p.block_size, "fraction_bits": p.F, "final_rounding": p.final_rounding,
                       "scales": [p.scale_format, p.scale_block] if p.scale_format else None,
                       "group_size": p.group_size,
                       "integer": [p.overflow, p.saturation] if p.fout.is_integer else None,
                       "sparsity": [p.sparsity, p.sparse_order] if mask is not None else None},
           "a": [_number(p.fin, x) for x in a], "b": [_number(p.fb, y) for y in b],
           "c": _number(p.fc, c), "d": {"hex": r.hex, "decimal": r.decimal, "kind": r.kind}}
    fs = p.fscale
    if fs is not None and sa is not None and sb is not None:
        doc["scale_a"] = [_number(fs, x) for x in sa]
        doc["scale_b"] = [_number(fs, x) for x in sb]
    if mask is not None:
        doc["mask"] = mask
    if explain_stages:
        doc["stages"] = [list(st) for st in explain(p, a, b, c, sa, sb, mask)]
    return doc


def simulate_lines(doc: dict) -> list[str]:
    """The lines ``tcsmt simulate`` prints of its document."""
    s = doc["summary"]
    fin, fb, fc, fout = s["formats"]
    scaled = "" if not s["scales"] else f", scales {s['scales'][0]} per {s['scales'][1]}"
    grouped = "" if s["group_size"] == 1 else f", exact groups of {s['group_size']}"
    sparse = "" if not s.get("sparsity") else f", {s['sparsity'][0]} sparse ({s['sparsity'][1]})"
    ints = s.get("integer")
    arith = (f"exact, {ints[0]}" + (f" ({ints[1]})" if ints[0] == "saturate" else "") if ints
             else f"{s['fraction_bits']} fraction bits, {s['final_rounding']}")
    lines = [f"model  {doc['model']}: {fin} x {fb} + {fc} -> {fout}, block {s['block_size']}, "
             f"{arith}{scaled}{grouped}{sparse}",
             "a      " + ", ".join(x["text"] for x in doc["a"]),
             "b      " + ", ".join(y["text"] for y in doc["b"]),
             "c      " + doc["c"]["text"]]
    if "scale_a" in doc:
        lines.append("scales of a  " + ", ".join(x["text"] for x in doc["scale_a"]))
        lines.append("scales of b  " + ", ".join(x["text"] for x in doc["scale_b"]))
    if "mask" in doc:
        lines.append("mask   " + "".join(map(str, doc["mask"])))
    lines += [f"  {stage:<18} {text}" for stage, text in doc.get("stages", [])]
    d = doc["d"]
    lines.append(f"d      {d['hex']} = {d['decimal']}" + ("" if d["kind"] in ("normal", "zero")
                                                           else f" ({d['kind']})"))
    return lines
