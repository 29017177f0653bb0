"""tcsmt.torch: torch tensors through an emulated unit, and emulate()
routing torch's matrix products (runs the NumPy backend: no compilation)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tcsmt.torch as tt  # noqa: E402
from tcsmt.api import matmul as np_matmul  # noqa: E402


def test_matmul_equals_the_numpy_simulator_on_tensors():
    g = torch.Generator().manual_seed(0)
    A = torch.randn(7, 37, generator=g, dtype=torch.float16)
    B = torch.randn(37, 5, generator=g, dtype=torch.float16)
    C = torch.randn(7, 5, generator=g)
    D = tt.matmul(A, B, C, model="hopper", backend="numpy")
    want = np_matmul(A.numpy(), B.numpy(), C.numpy(), arch="hopper", backend="numpy")
    assert D.dtype == torch.float32 and D.shape == (7, 5)
    assert np.array_equal(D.numpy().view(np.uint32), want.view(np.uint32))


def test_float32_operands_are_rounded_to_nearest_even_into_the_input_format():
    g = torch.Generator().manual_seed(1)
    A, B = torch.randn(4, 9, generator=g), torch.randn(9, 3, generator=g)
    D = tt.matmul(A, B, model="ampere-bf16-fp32", backend="numpy")
    same = tt.matmul(A.to(torch.bfloat16), B.to(torch.bfloat16), model="ampere-bf16-fp32",
                     backend="numpy")
    assert torch.equal(D, same)


def test_a_unit_differs_from_float64_and_units_differ_from_each_other():
    g = torch.Generator().manual_seed(2)
    A = torch.randn(16, 256, generator=g, dtype=torch.float16)
    B = torch.randn(256, 16, generator=g, dtype=torch.float16)
    exact = A.double() @ B.double()
    volta = tt.matmul(A, B, model="volta", backend="numpy").double()
    hopper = tt.matmul(A, B, model="hopper", backend="numpy").double()
    assert not torch.equal(volta, hopper)
    assert (volta - exact).abs().max() < 1e-3 and (hopper - exact).abs().max() < 1e-3


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(3)
        self.fc1 = torch.nn.Linear(24, 16)
        self.fc2 = torch.nn.Linear(16, 4)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        return self.fc2(h) + (x[:, :4] @ torch.ones(4, 4))


def test_emulate_routes_linear_and_matmul_through_the_unit():
    net, x = Net(), torch.randn(5, 24, generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        native = net(x)
        with tt.emulate("hopper", backend="numpy"):
            emulated = net(x)
        # the same network, each product by hand through tcsmt.torch.matmul
        h = torch.relu(tt.matmul(x, net.fc1.weight.t(), net.fc1.bias, "hopper", "numpy"))
        by_hand = (tt.matmul(h, net.fc2.weight.t(), net.fc2.bias, "hopper", "numpy")
                   + tt.matmul(x[:, :4], torch.ones(4, 4), None, "hopper", "numpy"))
    assert torch.equal(emulated, by_hand)
    assert not torch.equal(emulated, native)        # fp16 inputs: not float32 arithmetic
    assert (emulated - native).abs().max() < 0.05


def test_emulate_routes_bmm_and_batched_matmul():
    g = torch.Generator().manual_seed(5)
    A, B = torch.randn(3, 4, 20, generator=g), torch.randn(3, 20, 2, generator=g)
    with tt.emulate("ampere", backend="numpy"):
        got_bmm, got_at = torch.bmm(A, B), A @ B
    want = torch.stack([tt.matmul(a, b, None, "ampere", "numpy") for a, b in zip(A, B)])
    assert torch.equal(got_bmm, want) and torch.equal(got_at, want)


def test_other_operations_are_untouched_inside_emulate():
    x = torch.arange(6.0).reshape(2, 3)
    with tt.emulate("hopper", backend="numpy"):
        y = (x * 2 + 1).sum()
    assert y.item() == 36.0
