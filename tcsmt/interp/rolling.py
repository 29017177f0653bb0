"""Loops found in a recorded straight-line program (tcsmt.interp.program).

A program recorded for a dot product of length K is, for most models, one
stretch of instructions repeated once per block (or per term), each
repetition reading the next block's inputs and the previous repetition's
result. ``roll`` finds such a stretch and checks, instruction by
instruction and argument by argument over every repetition, that the
program is exactly

    prefix;  for j in range(count): body(j);  suffix

where every argument of a body instruction is one of

* ``("local", i)``: the result of body instruction i < this one, same j;
* ``("carried", i, init)``: the result of body instruction i in
  repetition j - 1, and for j = 0 the slot ``init`` (computed before the loop);
* ``("indexed", source, row0, stride)``: an indexed input (an element of A
  or B, or a value hoisted from them) at row row0 + stride * j, or
  ``("indexed", source, rows)`` at row rows[j] where the rows are not
  evenly spaced (models that take the products out of order along K);
* ``("outer", slot)``: one slot for every j, computed before the loop (or a
  constant, or an input that is not indexed);

and every body result that is written to an indexed output (``sinks``) is
written at row row0 + stride * j (or rows[j]). Evenly spaced rows are
looked for first; listed rows only where no loop has them. Suffix instructions may read only the
last repetition's body results. Nothing is assumed about the datapath: a
program that is not of this form gets ``None`` and is compiled straight.
The kernels run the rolled form, which is the recorded program itself.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

MIN_COUNT = 2
MAX_PERIODS = 8
MAX_PHASES = 4


@dataclass(frozen=True)
class Loop:
    """prefix = code[:start], body = code[start:start + length] run
    ``count`` times, suffix = code[start + length * count:]."""
    start: int
    length: int
    count: int
    args: tuple          # per body instruction, per argument: a classification
    sinks: tuple         # per body instruction: None or (sink, row0, stride)
    exported: frozenset  # body positions the suffix reads (last repetition)

    @property
    def end(self) -> int:
        return self.start + self.length * self.count


def roll(code: list, indexed: dict, sinks: dict | None = None, counts: tuple = ()) -> Loop | None:
    """The loop of ``code`` (instructions (op, args, static, result slot)),
    or None. ``indexed``: slot -> (source, row) of indexed inputs;
    ``sinks``: slot -> (sink, row) of results written to indexed outputs;
    ``counts``: repetition counts worth trying first (blocks, terms): a
    hint only, every candidate is checked in full."""
    sinks = sinks or {}
    sig = [(op, static) for op, _, static, _ in code]
    live = None
    hinted = [len(code) // c + d for c in counts if c for d in (0, -1, 1, -2, 2)]
    periods = _periods(sig)
    lengths = list(dict.fromkeys([x for x in hinted if x > 0] + _near_hints(sig, counts)
                                 + periods[:MAX_PERIODS]))
    for listed in (False, True):
        for length in lengths:
            run = _run(sig, length)
            if run is None:
                continue
            live = live or _live_counts(code)
            for start, count in _phases(run, length, live):
                loop = _check(code, indexed, sinks, start, length, count, listed)
                if loop is not None:
                    return loop
    return None


def _periods(sig: list) -> list[int]:
    """Candidate periods: distances from the middle instruction to later
    instructions with the same signature, shortest first."""
    n = len(sig)
    mid = n // 2
    if n < 2 * MIN_COUNT:
        return []
    return [j - mid for j in range(mid + 1, min(n, mid + n // MIN_COUNT + 1)) if sig[j] == sig[mid]]


def _near_hints(sig: list, counts: tuple) -> list[int]:
    """For each hinted count c, the shift within a quarter of n / c under
    which most instructions have the same signature as the one that far
    on: the period where a last partial block, or work before and after
    the loop, makes it differ from n // c."""
    n = len(sig)
    ids: dict = {}
    s = np.array([ids.setdefault(x, len(ids)) for x in sig], dtype=np.int64)
    out = []
    for c in (c for c in counts if 1 < c <= n):
        lo, hi = max(1, (3 * n) // (4 * c)), min(n - 1, (5 * n) // (4 * c))
        if lo <= hi:
            matches = [np.count_nonzero(s[:-x] == s[x:]) for x in range(lo, hi + 1)]
            out.append(lo + int(np.argmax(matches)))
    return out


def _run(sig: list, length: int) -> tuple[int, int] | None:
    """(lo, span): the longest stretch around the middle (or one period
    before it: the last repetition may be a shorter block) where
    sig[t] == sig[t + length] for every t in [lo, lo + span - length)."""
    n = len(sig)
    for anchor in (n // 2, n // 2 - length):
        if anchor < 0 or anchor + length >= n or sig[anchor] != sig[anchor + length]:
            continue
        lo = anchor
        while lo > 0 and sig[lo - 1] == sig[lo - 1 + length]:
            lo -= 1
        hi = anchor
        while hi + length < n and sig[hi] == sig[hi + length]:
            hi += 1
        if hi + length - lo >= MIN_COUNT * length:
            return lo, hi + length - lo
    return None


def _phases(run: tuple[int, int], length: int, live: list[int]) -> list[tuple[int, int]]:
    """(start, count) to try: where in the first period the loop may begin,
    those where the fewest values are live first (a repetition then hands
    on only what the next one needs), then the stretch's own start."""
    lo, span = run
    most = span // length
    phases = [p for p in range(lo, lo + length) if (span - (p - lo)) // length == most]
    best = sorted(phases, key=lambda p: (live[p], p))[:MAX_PHASES]
    return [(p, most) for p in dict.fromkeys(best + [lo])]


def _live_counts(code: list) -> list[int]:
    """live[t]: how many results of instructions before position t are read
    at t or later."""
    defined = {ins[3]: pos for pos, ins in enumerate(code)}
    last: dict[int, int] = {}
    for pos, ins in enumerate(code):
        for s in ins[1]:
            if s in defined:
                last[s] = pos
    delta = [0] * (len(code) + 1)
    for s, end in last.items():
        delta[defined[s] + 1] += 1
        delta[end + 1] -= 1
    live, run = [], 0
    for d in delta:
        run += d
        live.append(run)
    return live


def _check(code, indexed, sinks, start, length, count, listed=False) -> Loop | None:
    defined = {ins[3]: pos for pos, ins in enumerate(code)}
    end = start + length * count
    args, outs = [], []
    for i in range(length):
        reps = [code[start + j * length + i] for j in range(count)]
        kinds = []
        for q in range(len(reps[0][1])):
            kind = _classify([r[1][q] for r in reps], i, defined, indexed, start, length, end, listed)
            if kind is None:
                return None
            kinds.append(kind)
        out = _rows([sinks.get(r[3]) for r in reps], listed)
        if out is False:
            return None
        args.append(tuple(kinds))
        outs.append(out)
    exported = set()
    for ins in code[end:]:
        for s in ins[1]:
            pos = defined.get(s)
            if pos is None or pos < start or pos >= end:
                continue
            if pos < end - length:
                return None
            exported.add(pos - (end - length))
    return Loop(start, length, count, tuple(args), tuple(outs), frozenset(exported))


def _classify(slots, i, defined, indexed, start, length, end, listed=False):
    if all(s == slots[0] for s in slots):
        pos = defined.get(slots[0])
        if pos is None or pos < start:
            return ("outer", slots[0])
        return None
    pos = [defined.get(s) for s in slots]
    if all(p is not None and start <= p < end for p in pos):
        rel = [p - start - j * length for j, p in enumerate(pos)]
        if all(r == rel[0] for r in rel) and 0 <= rel[0] < i:
            return ("local", rel[0])
    if all(p is not None and start <= p < end for p in pos[1:]):
        rel = [p - start - (j - 1) * length for j, p in enumerate(pos) if j]
        init = pos[0]
        if all(r == rel[0] for r in rel) and 0 <= rel[0] < length and (init is None or init < start):
            return ("carried", rel[0], slots[0])
    rows = _rows([indexed.get(s) for s in slots], listed)
    if rows:
        return ("indexed", *rows)
    return None


def _rows(rows: list, listed: bool):
    """(name, row0, stride) as _affine, or with ``listed`` (name, rows)
    when every entry is of one name but the rows are not evenly spaced."""
    aff = _affine(rows)
    if aff is not False or not listed:
        return aff
    if any(r is None or r[0] != rows[0][0] for r in rows):
        return False
    return rows[0][0], tuple(r[1] for r in rows)


def _affine(rows: list):
    """(name, row0, stride) when every entry is (name, row0 + stride * j);
    None when every entry is None; False otherwise."""
    if all(r is None for r in rows):
        return None
    if any(r is None or r[0] != rows[0][0] for r in rows):
        return False
    stride = rows[1][1] - rows[0][1]
    if any(r[1] != rows[0][1] + stride * j for j, r in enumerate(rows)):
        return False
    return rows[0][0], rows[0][1], stride


def by_last_input(code: list, last_input: dict) -> list:
    """The same instructions in another order that their dependencies
    allow: each instruction as soon as it is ready, the one whose inputs
    reach least far along K first (``last_input``: slot -> the largest k of
    the inputs it depends on), ties in the original order. A program
    whose traversal interleaves blocks (a late c added after each block's
    sum) comes out block after block, and may then roll."""
    defined = {ins[3]: pos for pos, ins in enumerate(code)}
    waiting = [0] * len(code)
    users: list[list[int]] = [[] for _ in code]
    for pos, ins in enumerate(code):
        for s in set(ins[1]):
            if s in defined:
                waiting[pos] += 1
                users[defined[s]].append(pos)
    ready = [(last_input.get(ins[3], -1), pos) for pos, ins in enumerate(code) if not waiting[pos]]
    heapq.heapify(ready)
    out = []
    while ready:
        _, pos = heapq.heappop(ready)
        out.append(code[pos])
        for u in users[pos]:
            waiting[u] -= 1
            if not waiting[u]:
                heapq.heappush(ready, (last_input.get(code[u][3], -1), u))
    return out


def last_inputs(code: list, inputs: dict) -> dict:
    """slot -> the largest k among the inputs (slot -> k) it depends on."""
    reach = dict(inputs)
    for ins in code:
        reach[ins[3]] = max((reach.get(s, -1) for s in ins[1]), default=-1)
    return reach
