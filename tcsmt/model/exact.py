"""Exact values written as expressions: "1 - 2^-24", "-(2^-23 + 2^-24)",
"4*(1 - 2^-10 + 2^-22)". Decimals, + - * /, ^ with an integer power
(binding tightest, right to left) and brackets; the value is a Fraction.
Used where people write the values of test vectors (suite files)."""

from __future__ import annotations

import re
from fractions import Fraction

_TOKEN = re.compile(r"\s*(?:(\d+(?:\.\d*)?|\.\d+)|(\S))")


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
        return v

    def unary() -> Fraction:
        if peek() in (("o", "-"), ("o", "+")):
            return -unary() if take()[1] == "-" else unary()
        return power()

    def power() -> Fraction:
        base = atom()
        if peek() == ("o", "^"):
            take()
            e = unary()
            if e.denominator != 1 or abs(e) > 100000 or (base == 0 and e < 0):
                raise ValueError("bad power")
            return base ** int(e)
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
    v = expr()
    if pos != len(tokens):
        raise ValueError(f"unexpected {tokens[pos][1]!r}")
    return v


def parse_value_text(text: str) -> Fraction | float:
    """An expression, or inf, -inf, nan."""
    low = str(text).strip().lower()
    if low in ("inf", "+inf", "-inf", "nan"):
        return float(low)
    return parse_exact(text)
