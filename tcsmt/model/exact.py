"""Exact values written as expressions: "1 - 2^-24", "-(2^-23 + 2^-24)",
"4*(1 - 2^-10 + 2^-22)". Decimals, + - * /, ^ with an integer power
(binding tightest, right to left) and brackets; the value is a Fraction.
Used where people write the values of test vectors (suite files)."""

from __future__ import annotations

import re
from fractions import Fraction

_TOKEN = re.compile(r"\s*(?:(\d+(?:\.\d*)?|\.\d+)|(\S))")
_DECIMAL_EXPONENT = re.compile(r"[eE]\s*([+-]?\d+)")

MAX_POWER = 100_000
"""The largest |N| of a power 2^N (or x^N) in a value: far beyond every
format's range, small enough that the exact value is computed at once."""
MAX_DECIMAL_EXPONENT = 30_000
"""The largest |N| of a decimal exponent (1.5e-N)."""
MAX_VALUE_BITS = 4_000_000
"""The largest numerator or denominator of an intermediate value, in bits."""


def check_exponents(text: str) -> None:
    """Refuse a decimal exponent beyond MAX_DECIMAL_EXPONENT before any
    exact arithmetic (Fraction("1e-99999999") would compute 10^99999999)."""
    for m in _DECIMAL_EXPONENT.finditer(text):
        if len(m.group(1)) > 12 or abs(int(m.group(1))) > MAX_DECIMAL_EXPONENT:
            raise ValueError(f"decimal exponent {m.group(1)} is beyond +-{MAX_DECIMAL_EXPONENT}")


def exact_power(base: Fraction, e: Fraction) -> Fraction:
    """base ** e for an integer e of at most MAX_POWER in size, refusing
    results of more than MAX_VALUE_BITS bits. Raises ValueError."""
    if e.denominator != 1 or abs(e) > MAX_POWER or (base == 0 and e < 0):
        raise ValueError(f"bad power: the exponent must be an integer within +-{MAX_POWER}")
    size = max(base.numerator.bit_length(), base.denominator.bit_length())
    if size * abs(int(e)) > MAX_VALUE_BITS + abs(int(e)):
        raise ValueError("bad power: the value is too large to compute exactly")
    return base ** int(e)


def parse_exact(text: str) -> Fraction:
    """The exact value of an expression of decimals, + - * / ^ and brackets
    (``^`` binds tightest and takes an integer power). Raises ValueError."""
    tokens = [("n", Fraction(num)) if num else ("o", op) for num, op in _TOKEN.findall(str(text))]
    pos = 0

    def peek():
        return tokens[pos] if pos < len(tokens) else ("end", None)

    def take():
        nonlocal pos
        pos += 1
        return tokens[pos - 1]

    def expr() -> Fraction:
        v = term()
        while peek() in (("o", "+"), ("o", "-")):
            op = take()[1]
            v = v + term() if op == "+" else v - term()
        return v

    def term() -> Fraction:
        v = unary()
        while peek() in (("o", "*"), ("o", "/")):
            op = take()[1]
            w = unary()
            if op == "/" and w == 0:
                raise ValueError("division by zero")
            v = v * w if op == "*" else v / w
            if max(v.numerator.bit_length(), v.denominator.bit_length()) > MAX_VALUE_BITS:
                raise ValueError("the value is too large to compute exactly")
        return v

    def unary() -> Fraction:
        if peek() in (("o", "-"), ("o", "+")):
            return -unary() if take()[1] == "-" else unary()
        return power()

    def power() -> Fraction:
        base = atom()
        if peek() == ("o", "^"):
            take()
            return exact_power(base, unary())
        return base

    def atom() -> Fraction:
        kind, val = peek()
        if kind == "n":
            take()
            return val
        if (kind, val) == ("o", "("):
            take()
            v = expr()
            if peek() != ("o", ")"):
                raise ValueError("missing )")
            take()
            return v
        raise ValueError(f"unexpected {val!r}")

    if not tokens:
        raise ValueError("empty")
    try:
        v = expr()
    except RecursionError:
        raise ValueError("too deeply nested") from None
    if pos != len(tokens):
        raise ValueError(f"unexpected {tokens[pos][1]!r}")
    return v


def parse_value_text(text: str) -> Fraction | float:
    """An expression, or inf, -inf, nan."""
    low = str(text).strip().lower()
    if low in ("inf", "+inf", "-inf", "nan"):
        return float(low)
    return parse_exact(text)
