"""Candidate inputs for compare-algorithms, tried before the solvers: the
witnesses other architectures' results hold (cut or padded with zero
terms to k), mutations of them (the live terms moved to other positions,
every sign flipped, a scaled by 2^j and b by 2^-j, c one ulp either way),
and a structured pool like the solvers' first restriction (two live
products, b a power of two, c near a power of two). Each is evaluated on
the concrete model (compare.check_witness) by the caller; the first that
answers the question is a witness like any solver's. Deterministic for a
seed."""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from pathlib import Path

from tcsmt.errors import BadFile
from tcsmt.fileio import read_json
from tcsmt.search.vectors import Vector

SIGN = 1 << 31
RANDOM = 400
"""Structured random candidates after the seeds and their mutations."""


def vector_of(record: dict) -> Vector:
    """The inputs of one vector record of a tcsmt-compare file (its a, b
    and c as hex); KeyError, TypeError or ValueError when it is not one."""
    return Vector(tuple(int(x["hex"], 16) for x in record["a"]),
                  tuple(int(y["hex"], 16) for y in record["b"]), int(record["c"]["hex"], 16))


def seeds_from(folder: str | Path, skip: str | Path | None = None) -> list[Vector]:
    """The witnesses of the compare-algorithms results in ``folder`` (every
    file but ``skip``; ``folder`` may be one such file), in file order.
    In a folder, files that are not compare-algorithms results give
    nothing; a file named that cannot be read is a one-line error."""
    out = []
    where = Path(folder)
    named = where.is_file()
    for path in [where] if named else sorted(where.glob("*.json")):
        if skip is not None and path.resolve() == Path(skip).resolve():
            continue
        try:
            doc = read_json(path)
        except BadFile:
            if named:
                raise
            continue
        for v in (doc.get("vectors") or []) if isinstance(doc, dict) else []:
            try:
                out.append(vector_of(v))
            except (KeyError, TypeError, ValueError):
                continue
    return out


def fit(vec: Vector, k: int) -> Vector:
    """vec with k terms: its live terms kept in order, zero terms padding."""
    live = [(x, y) for x, y in zip(vec.a, vec.b) if (x | y) & ~SIGN]
    if len(live) > k:
        live = live[:k]
    pos = [round(i * (k - 1) / max(1, len(live) - 1)) for i in range(len(live))] if len(live) > 1 else [k - 1]
    a, b = [0] * k, [0] * k
    for p, (x, y) in zip(pos, live):
        a[p], b[p] = x, y
    return Vector(tuple(a), tuple(b), vec.c)


def _scaled(x: int, j: int) -> int:
    """x (binary32 bits, normal) times 2^j, or x where that leaves the normal range."""
    e = (x >> 23) & 0xFF
    return x if e == 0 or not 0 < e + j < 255 else x + (j << 23)


def mutations(vec: Vector, rng: random.Random) -> Iterator[Vector]:
    k = len(vec.a)
    yield Vector(tuple(x ^ SIGN for x in vec.a), vec.b, vec.c ^ SIGN)
    yield Vector(vec.a[::-1], vec.b[::-1], vec.c)
    for d in (1, -1):
        if vec.c & ~SIGN:
            yield Vector(vec.a, vec.b, vec.c + d)
    for _ in range(6):
        j = rng.randint(-3, 3)
        yield Vector(tuple(_scaled(x, j) for x in vec.a), tuple(_scaled(y, -j) for y in vec.b), vec.c)
    perm = list(range(k))
    rng.shuffle(perm)
    yield Vector(tuple(vec.a[i] for i in perm), tuple(vec.b[i] for i in perm), vec.c)


def structured(k: int, rng: random.Random) -> Vector:
    """Two live products, binary32 a with a few fraction bits, b a power of
    two, c within a few ulps of a power of two, any signs."""
    a, b = [0] * k, [0] * k
    for i in rng.sample(range(k), min(2, k)):
        a[i] = (rng.getrandbits(1) << 31) | ((127 + rng.randint(-14, 14)) << 23) | \
            (rng.getrandbits(10) << 13)
        b[i] = (rng.getrandbits(1) << 31) | ((127 + rng.randint(-14, 14)) << 23)
    c = (rng.getrandbits(1) << 31) | ((127 + rng.randint(-20, 10)) << 23)
    c = c + rng.randint(-16, 16) if c & 0x7FFFFF or rng.random() < 0.5 else c
    return Vector(tuple(a), tuple(b), c & 0xFFFFFFFF)


def candidates(k: int, seeds: Iterable[Vector], seed: int = 0, extra: int = RANDOM) -> Iterator[Vector]:
    """The seeds fitted to k, then their mutations, then ``extra`` structured ones."""
    rng = random.Random(seed)
    fitted = [fit(v, k) for v in seeds]
    yield from fitted
    for v in fitted:
        yield from mutations(v, rng)
    for _ in range(extra):
        yield structured(k, rng)
