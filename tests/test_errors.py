"""Errors a caller catches by kind: each kind of bad input raises its own
subclass of UserError (exit 2 on the command line), so a library caller
tells them apart without reading messages."""

from __future__ import annotations

import numpy as np
import pytest

import tcsmt
from tcsmt import errors
from tcsmt.errors import (
    BadFile,
    FormatMismatch,
    OutputRefused,
    ShapeError,
    SolverMissing,
    UnknownModel,
    UserError,
)


def test_every_kind_is_a_user_error_with_its_exit_code():
    for name in errors.__all__:
        kind = getattr(errors, name)
        if issubclass(kind, UserError):
            assert kind.exit_code == 2, name
        elif kind is errors.AnswersLost:    # the run went as asked; the file it would spoil is kept
            assert kind.exit_code == 1, name
        else:
            assert kind.exit_code == 3, name


def test_unknown_model():
    with pytest.raises(UnknownModel, match="unknown architecture 'pentium'"):
        tcsmt.choose_model("pentium")


def test_format_mismatch():
    with pytest.raises(FormatMismatch, match="has no model for formats"):
        tcsmt.choose_model("volta", "e4m3:fp32")
    with pytest.raises(FormatMismatch):
        tcsmt.matmul(np.zeros((2, 2), np.float64), np.zeros((2, 2), np.float16), arch="hopper")


def test_shape_error():
    with pytest.raises(ShapeError, match="must match"):
        tcsmt.simulate("ampere", ["1", "1"], ["1"])
    a = np.zeros((2, 3), np.float16)
    with pytest.raises(ShapeError, match="A's columns must equal B's rows"):
        tcsmt.matmul(a, a, arch="hopper-fp16-fp32")


def test_bad_file(tmp_path):
    (tmp_path / "x.json").write_text("{not json")
    with pytest.raises(BadFile, match="not JSON"):
        tcsmt.replay(tmp_path / "x.json")


def test_output_refused(tmp_path):
    from tcsmt.fileio import refuse_overwriting
    f = tmp_path / "a.npy"
    f.write_bytes(b"")
    with pytest.raises(OutputRefused, match="which this command reads"):
        refuse_overwriting(f, {"A": f}, "-o")


def test_solver_missing(monkeypatch):
    """A solver whose package cannot be imported (here: z3 blocked in
    sys.modules, which is what importlib sees when it is not installed)."""
    import sys

    from tcsmt.smt.service import SOLVERS, choose_solvers
    with pytest.raises(UserError, match="unknown solver"):
        choose_solvers("yices")
    monkeypatch.setitem(sys.modules, SOLVERS["z3"][0], None)
    with pytest.raises(SolverMissing, match="solver z3 is not installed .pip install z3-solver"):
        choose_solvers("z3")
