"""Stages whose results an interpretation may keep and share.

``@stage(params=N)`` marks a datapath function whose result depends only
on its arguments (data words, widths, formats, modes) and on the
parameters it reads from its ModelParams argument (at position N after
the interpretation; None: it takes none). An interpretation with a
``memo`` attribute (tcsmt.interp.memo) is handed every call of such a
function and may answer it from an earlier call with equal arguments and
equal values of the parameters that call read: thousands of hypotheses
run on one row share their unpacking, products and alignment. Every other
interpretation runs the function as written.
"""

from __future__ import annotations

import functools


def stage(params: int | None = None):
    def mark(fn):
        @functools.wraps(fn)
        def run(I, *args, **kw):
            memo = getattr(I, "memo", None)
            if memo is None:
                return fn(I, *args, **kw)
            return memo.call(fn, params, I, args, kw)
        return run
    return mark
