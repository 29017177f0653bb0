"""Helpers for a kernel author's tests: a kernel's D against a model's,
bit for bit.

``assert_matches_model(D, A, B, C, model)`` raises AssertionError unless
D (a NumPy array or a torch tensor, of the model's output dtype) equals,
in every bit, what the model's unit computes from the same operands; the
message says how many outputs differ, the largest distance in units in
the last place, and the first differing outputs with their inputs and the
model's stages (as ``tcsmt check`` explains a row). ``compare`` returns
the same as a document, without raising.

Operands are taken as tcsmt.matmul takes them (NumPy arrays in the
model's dtypes, ``scale_a``/``scale_b`` for a block-scaled model, and
``alpha``, a float32 that multiplies the unit's output before C is added,
for NVFP4's per-tensor scales), or as tcsmt.torch.matmul takes them
(tensors, rounded to nearest even into the model's formats; for a
block-scaled model float tensors quantised by ``recipe``, QuantizedTensors
or torchao's MXTensor / NVFP4Tensor, whose per-tensor scales are then
applied as alpha). In a pytest::

    import numpy as np
    from tcsmt.testing import assert_matches_model

    def test_my_kernel():
        rng = np.random.default_rng(0)
        A = rng.standard_normal((16, 64)).astype(np.float16)
        B = rng.standard_normal((64, 8)).astype(np.float16)
        C = np.zeros((16, 8), np.float32)
        D = my_kernel(A, B, C)                  # the kernel under test, float32 D
        assert_matches_model(D, A, B, C, model="hopper-fp16-fp32")

A kernel that adds the products to a float32 sum one at a time fails it
(tests/test_testing.py runs this example); the message begins and ends::

    D differs from hopper-fp16-fp32's in 103 of 128 outputs (16 x 8, K = 64); largest
    distance 56 ulps, at D[12, 4]
      first differing outputs (3 of 103), each with the model's stages:
      D[0, 0]: kernel 0x4119df83 = 9.61706829071044921875, model 0x4119df81 =
    9.61706638336181640625, 2 ulps apart
        a0*b0 = 0x3006 (0.125732421875) x 0x37bf (0.484130859375)
        ...
          aligned product 15   0.0886137485504150390625  (371673 x 2^-22)
          raw sum              9.6170670986175537109375  (40336903 x 2^-22)
          normalised           1.2021333873271942138671875 x 2^3
          block 3 result       0x4119df81 = 9.61706638336181640625
          rounded              0x4119df81 = 9.61706638336181640625 (rz to float32)

Each differing output shows its first inputs and stages and the last
block's; the lines between are left out, and said so.
"""

from tcsmt.testing.compare import assert_matches_model, compare

__all__ = ["assert_matches_model", "compare"]
