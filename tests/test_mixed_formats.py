"""a and b in different formats (b_format): the datapath reads b in its own
format in every interpretation, and the simulators and model files follow."""

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from tcsmt import matmul
from tcsmt.errors import ModelFileError
from tcsmt.model.choose import choose
from tcsmt.model.formats import get_format
from tcsmt.sim.batch import dot_batch
from tcsmt.sim.dot import dot_bits


def mixed():
    return choose("ada-e4m3-fp32").replace(name="ada-e4m3-e5m2", b_format="float8_e5m2")


def test_b_is_read_in_its_own_format():
    p = mixed()
    e4m3, e5m2, f32 = get_format("e4m3"), get_format("e5m2"), get_format("fp32")
    a = [e4m3.round_value(Fraction(v)) for v in (3, 5, -7, 1)]
    b = [e5m2.round_value(Fraction(v)) for v in (12, -0.375, 2, 16)]
    want = f32.round_value(Fraction(36) - Fraction(15, 8) - 14 + 16)
    assert dot_bits(p, a, b, 0) == want
    # the same bit patterns read as e4m3 give another sum
    assert dot_bits(p.replace(b_format=None), a, b, 0) != want
    assert dot_batch(p, np.array([a]), np.array([b]), np.array([0]))[0] == want


def test_matmul_takes_b_in_its_dtype():
    p = mixed()
    rng = np.random.default_rng(1)
    A = rng.integers(-8, 8, (3, 16)).astype(ml_dtypes.float8_e4m3fn)
    B = rng.integers(-8, 8, (16, 2)).astype(ml_dtypes.float8_e5m2)
    C = np.zeros((3, 2), np.float32)
    D = matmul(A, B, C, arch=p)
    assert np.array_equal(D, A.astype(np.float32) @ B.astype(np.float32))
    with pytest.raises(Exception, match="B has dtype"):
        matmul(A, B.astype(ml_dtypes.float8_e4m3fn), C, arch=p)


def test_labels_and_validation():
    p = mixed()
    assert p.formats_label == "e4m3,e5m2:fp32"
    assert choose("ada-e4m3-fp32").formats_label == "e4m3:fp32"
    with pytest.raises(ModelFileError, match="b_format"):
        p.replace(b_format="float7")
