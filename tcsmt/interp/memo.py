"""The Python-int interpretation, keeping the results of datapath stages.

Screening a space runs thousands of hypotheses on the same row through the
scalar interpreter; most of them unpack the same inputs, form the same
products and often align and add the same terms, since a stage reads only
a few of a hypothesis's parameters. ``MemoInterp`` is IntInterp with a
``memo`` that the stages marked ``@stage`` (tcsmt.datapath.stage) consult:
a call is answered from an earlier one when its arguments are equal and
the parameters the earlier call read (recorded as it ran) have equal
values. The stage itself always runs as written, once per distinct
(arguments, parameters read); nothing of the datapath is written here.

A call is keyed by value: words by (value, width), terms by their fields,
results the memo handed out by a number given when they were kept (they
are never changed in place). A term a stage computes equal to one kept
before is handed back as that one, so the stages after it are answered
alike, whichever hypothesis (with whatever parameters) computed it. A
stage called inside another's first run adds to the outer's reads the
names its answer depends on. The memo is emptied when it holds ``LIMIT``
results; numbers are never handed out twice.
"""

from __future__ import annotations

import dataclasses
from operator import attrgetter

from tcsmt.datapath.terms import Fixed, Term
from tcsmt.interp.ints import IntBool, IntInterp, IntWord
from tcsmt.model.formats import Format
from tcsmt.model.params import ModelParams

LIMIT = 200_000
_PLAIN = frozenset({int, str, bool, float, type(None)})
"""Arguments that are their own key (a Format is keyed by its number:
StageMemo.format_key)."""
_FIELDS = {t: attrgetter(*(f.name for f in dataclasses.fields(t))) for t in (Term, Fixed)}


def _no_values(names: tuple) -> tuple:
    return ()


class _Reads:
    """A ModelParams seen through: every attribute read is recorded with its value."""

    __slots__ = ("_p", "_seen")

    def __init__(self, p, seen: list) -> None:
        object.__setattr__(self, "_p", p)
        object.__setattr__(self, "_seen", seen)

    def __getattr__(self, name: str):
        value = getattr(self._p, name)
        self._seen.append((name, value))
        return value


class StageMemo:
    def __init__(self, limit: int = LIMIT) -> None:
        self.limit = limit
        self.hits = 0
        self.misses = 0
        self._numbers = 0     # never handed out twice, not even after clear(): a stage that
        self.clear()          # began before it keeps its arguments' numbers
        self._formats: dict[int, tuple[Format, tuple]] = {}

    def format_key(self, f: Format) -> tuple:
        """A number for each Format object (hashing a format hashes all its
        fields; most look-ups hold one or two). Two equal formats that are
        distinct objects get two numbers: a call with the other misses, it
        is never answered wrongly."""
        held = self._formats.get(id(f))
        if held is None or held[0] is not f:
            held = self._formats[id(f)] = (f, ("format", len(self._formats)))
        return held[1]

    def clear(self) -> None:
        # per stage function: {names read: {(argument key, values read): result}}
        self._calls: dict = {}
        self._kept: dict[int, tuple[object, tuple]] = {}   # id(result) -> (result, number)
        self._values: dict[tuple, object] = {}            # a kept result's value -> that result
        self._size = 0
        self._models: dict[int, tuple] = {}               # id(params) -> (params, their values)

    def key(self, x):
        t = type(x)
        if t is IntWord:
            return (x.v, x.w)
        if t is list or t is tuple:       # the common items without a call each
            kept, formats = self._kept, self._formats
            out: list = []
            add = out.append
            for e in x:
                te = type(e)
                if te is IntWord:
                    add((e.v, e.w))
                elif te is Term or te is Fixed:
                    held = kept.get(id(e))
                    add(held[1] if held is not None and held[0] is e else self.key(e))
                elif te in _PLAIN:
                    add(e)
                elif te is Format:
                    held = formats.get(id(e))
                    add(held[1] if held is not None and held[0] is e else self.format_key(e))
                elif te is IntBool:
                    add(e.b)
                else:
                    add(self.key(e))
            return tuple(out)
        if t is IntBool:
            return x.b
        if t is Format:
            return self.format_key(x)
        fields = _FIELDS.get(t)
        if fields is not None:
            held = self._kept.get(id(x))
            if held is not None and held[0] is x:
                return held[1]
            return (t,) + self.key(fields(x))
        return x

    def call(self, fn, params: int | None, I, args: tuple, kw: dict):
        if kw:
            if kw.get("trace") is not None:
                return fn(I, *args, **kw)
            extra: tuple = (tuple(kw), self.key(tuple(kw.values())))
        else:
            extra = ()
        calls = self._calls.get(fn)
        if calls is None:
            calls = self._calls[fn] = {}
        if params is None:                # a stage of no parameters: one set of names, ()
            p = raw = None
            inputs = (self.key(args), extra)
            results = calls.get(())
            if results is not None:
                found = results.get((inputs, ()))
                if found is not None:
                    self.hits += 1
                    return found
        else:
            p = raw = args[params]
            while type(raw) is _Reads:    # a stage called inside another's first run
                raw = raw._p
            inputs = (self.key(args[:params] + args[params + 1:]), extra)
            values = self._read_values(raw)
            for names, results in calls.items():
                found = results.get((inputs, values(names)))
                if found is not None:
                    self.hits += 1
                    if p is not raw:      # the outer stage read what this answer depends on
                        for n in names:
                            getattr(p, n)
                    return found
        self.misses += 1
        seen: list = []
        if params is None:
            out = fn(I, *args, **kw)
        else:
            given = list(args)
            given[params] = _Reads(p, seen)
            out = fn(I, *given, **kw)
        if self._size >= self.limit:
            self.clear()
            calls = self._calls.setdefault(fn, {})
        if type(out) is Term or type(out) is Fixed:
            out = self._keep(out)
        elif type(out) is tuple:            # a block's products: each term numbered
            out = tuple(self._keep(x) if type(x) is Term else x for x in out)
        names = tuple(dict.fromkeys(n for n, _ in seen))     # each name once, in the order first read
        calls.setdefault(names, {})[(inputs, self._read_values(raw)(names))] = out
        self._size += 1
        return out

    def _read_values(self, raw):
        """names -> the values of those parameters of ``raw``, each tuple
        made once per model (a parameter may be a property: facc, F)."""
        if raw is None:
            return _no_values
        held = self._models.get(id(raw))
        if held is None or held[0] is not raw:
            cache: dict = {}

            def values(names: tuple) -> tuple:
                v = cache.get(names)
                if v is None:
                    v = cache[names] = tuple([self.key(getattr(raw, n)) for n in names])
                return v
            held = self._models[id(raw)] = (raw, values)
        return held[1]

    def _keep(self, out):
        """``out`` numbered once (a stage may hand back what a stage inside
        it kept), and one number per value: a result equal to a kept one is
        handed back as that one, so the stages after it are answered alike
        whichever hypothesis computed it."""
        if id(out) in self._kept:
            return out
        value = self.key(out)
        same = self._values.get(value)
        if same is not None:
            return same
        self._values[value] = out
        self._kept[id(out)] = (out, ("kept", self._numbers))
        self._numbers += 1
        return out


class MemoInterp(IntInterp):
    """IntInterp whose datapath stages share their results (see the module)."""

    def __init__(self, limit: int = LIMIT) -> None:
        super().__init__()
        self.memo = StageMemo(limit)


NARROW = 12
"""Words up to this many bits are worth keeping stages for: an 8-bit
format has 256 encodings and 65 536 pairs, so a row of products is mostly
answered; a 16-bit one's pairs rarely repeat (the look-up would cost more
than it saves)."""


class RowMemo:
    """For many rows of the same model(s): an element stage (unpack,
    multiply) is answered from an earlier call with equal narrow words
    (NARROW bits at most), equal static values, the same ModelParams and
    Format objects (they are frozen) and the same Terms this memo handed
    out (frozen too: words are never changed in place). Any other call
    (a list of words, a wide word, a Fixed, a trace) runs as written.
    Emptied when it holds ``limit`` results."""

    def __init__(self, limit: int = LIMIT) -> None:
        self.limit = limit
        self.hits = self.misses = 0
        self._calls: dict[tuple, object] = {}
        self._held: dict[int, object] = {}   # id -> the object keyed by it, kept alive

    def call(self, fn, params: int | None, I, args: tuple, kw: dict):
        key = self._key(fn, args) if not kw else None
        if key is None:
            return fn(I, *args, **kw)
        out = self._calls.get(key)
        if out is not None:
            self.hits += 1
        else:
            self.misses += 1
            out = fn(I, *args)
            if len(self._calls) >= self.limit:
                self._calls.clear()
                self._held.clear()
            self._calls[key] = out
            if type(out) is Term:
                self._held[id(out)] = out
        return out

    def _key(self, fn, args: tuple) -> tuple | None:
        key: list = [fn]
        for x in args:
            t = type(x)
            if t is IntWord:
                if x.w > NARROW:
                    return None
                key.append((x.v, x.w))
            elif t is IntBool or t is int or t is bool or t is str or x is None:
                key.append(x.b if t is IntBool else x)
            elif t is Term:
                if self._held.get(id(x)) is not x:
                    return None
                key.append(id(x))
            elif t is ModelParams or t is Format:
                self._held.setdefault(id(x), x)
                if self._held[id(x)] is not x:
                    return None
                key.append(id(x))
            else:
                return None
        return tuple(key)


class RowsInterp(IntInterp):
    """IntInterp whose element stages are kept across rows (RowMemo)."""

    def __init__(self, limit: int = LIMIT) -> None:
        super().__init__()
        self.memo = RowMemo(limit)
