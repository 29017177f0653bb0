"""tcsmt.torch on block-scaled models (MX, NVFP4): float tensors quantised
by a recipe, QuantizedTensors and torchao's tensors passed through, the
per-tensor scale, emulate() over a network; each against tcsmt.matmul on
the same quantised operands, and against MMA-Sim on a slice."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))

from torchao_ref import MXTensor, NVFP4Tensor  # noqa: E402

import tcsmt  # noqa: E402
import tcsmt.quant as tq  # noqa: E402
import tcsmt.torch as tt  # noqa: E402
from tcsmt.errors import FormatMismatch, UserError  # noqa: E402
from tcsmt.model.choose import choose  # noqa: E402
from tcsmt.peer import mmasim  # noqa: E402
from tcsmt.sim.npio import to_bits  # noqa: E402

MODELS = ["blackwell-nvfp4", "blackwell-mxf4", "blackwell-mxf4nvf4-b16", "blackwell-mxf8f6f4-e4m3",
          "blackwell-mxf8f6f4-e5m2", "blackwell-mxf8f6f4-e2m3", "blackwell-mxf8f6f4-e3m2-e2m1",
          "rtx-blackwell-nvfp4"]


def operands(seed: int, m: int = 6, k: int = 96, n: int = 5):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(m, k, generator=g), torch.randn(k, n, generator=g), torch.randn(m, n, generator=g)


def by_numpy(p, A, B, C, recipe=None):
    """tcsmt.matmul on operands quantised by tcsmt.quant, the per-tensor
    scales applied after (the reference for tcsmt.torch)."""
    qa = tq.quantize_for(p, A.numpy(), "a", recipe)
    qb = tq.quantize_for(p, B.numpy(), "b", recipe)
    pts = [s for s in (qa.per_tensor_scale, qb.per_tensor_scale) if s is not None]
    c = C.numpy() if (C is not None and not pts) else np.zeros((A.shape[0], B.shape[1]), np.float32)
    D = np.asarray(tcsmt.matmul(qa.elements, qb.elements, c, model=p, scale_a=qa.scales,
                                scale_b=qb.scales, backend="numpy"))
    if pts:
        D = D * np.float32(np.float32(pts[0]) * np.float32(pts[1]))
        if C is not None:
            D = D + C.numpy()
    return D


@pytest.mark.parametrize("name", MODELS)
def test_matmul_of_float_tensors_equals_tcsmt_matmul_on_the_quantised_operands(name):
    p = choose(name)
    A, B, C = operands(1)
    D = tt.matmul(A, B, C, model=p, backend="numpy")
    assert D.dtype == torch.float32 and D.shape == (6, 5)
    assert np.array_equal(D.numpy().view(np.uint32), by_numpy(p, A, B, C).view(np.uint32))
    exact = (A.double() @ B.double() + C.double())
    assert (D.double() - exact).abs().max() < 0.5 * exact.abs().max()     # quantised, not garbage


def test_every_block_scaled_model_takes_float_tensors():
    """Every shipped block-scaled model (every kind, format pair and
    reading), on a small product: the same bits as tcsmt.matmul on the
    operands quantised by the model's recipe."""
    from tcsmt.model.catalogue import all_models
    scaled = [p for p in all_models() if p.scale_format]
    assert len(scaled) >= 80
    A, B, C = operands(14, 2, 64, 2)
    for p in scaled:
        D = tt.matmul(A, B, C, model=p, backend="numpy")
        assert np.array_equal(D.numpy().view(np.uint32), by_numpy(p, A, B, C).view(np.uint32)), p.name


@pytest.mark.parametrize("recipe", ["mx-rceil", "mx-even", "mx-rceil-exact"])
def test_a_named_recipe_is_the_one_used(recipe):
    p = choose("blackwell-mxf8f6f4-e4m3")
    A, B, C = operands(2)
    D = tt.matmul(A, B, C, model=p, backend="numpy", recipe=recipe)
    assert np.array_equal(D.numpy().view(np.uint32), by_numpy(p, A, B, C, recipe).view(np.uint32))


def test_the_compiled_cpu_kernel_gives_the_same_bits():
    p = choose("blackwell-nvfp4")
    A, B, C = operands(3, 16, 128, 8)
    got = tt.matmul(A, B, C, model=p, backend="cpu")
    assert torch.equal(got, tt.matmul(A, B, C, model=p, backend="numpy"))


def test_nvfp4_on_a_slice_equals_mmasim():
    """MMA-Sim's kind::mxf4nvf4 block16 ue4m3 instruction on the same
    quantised operands (c = 0), the per-tensor scales applied after."""
    p = choose("blackwell-nvfp4")
    A, B, _ = operands(4, 128, 256, 8)
    D = tt.matmul(A, B, model=p, backend="numpy")
    qa, qb = tt.quantize(A, "nvfp4", "e2m1"), tt.quantize(B, "nvfp4", "e2m1", axis=0)
    na, nb = qa.numpy(), qb.numpy()
    op = mmasim.operation("TCGen05MMABlockScale", "Blackwell",
                          "m128n8k64.kind::mxf4nvf4.block16.f32.e2m1.e2m1.ue4m3")
    ab, bb = to_bits(na.elements, p.fin, "A"), to_bits(nb.elements, p.fb, "B")
    acc = op(mmasim.operand(op, ab, p.fin, "a"), mmasim.operand(op, bb.T, p.fb, "b").T,
             torch.zeros(128, 8), qa.scales, qb.scales)
    alpha = np.float32(np.float32(na.per_tensor_scale) * np.float32(nb.per_tensor_scale))
    want = acc.numpy() * alpha
    assert np.array_equal(D.numpy().view(np.uint32), want.view(np.uint32))


def test_quantized_tensors_pass_through_as_they_are():
    p = choose("blackwell-nvfp4")
    A, B, C = operands(5)
    qa = tt.quantize(A, "nvfp4", "e2m1", per_tensor_scale=0.004)
    qb = tt.quantize(B, "nvfp4-block", "e2m1", axis=0)
    got = tt.matmul(qa, qb, C, model=p, backend="numpy")
    na, nb = qa.numpy(), qb.numpy()
    acc = tcsmt.matmul(na.elements, nb.elements, np.zeros((6, 5), np.float32), model=p,
                       scale_a=na.scales, scale_b=nb.scales, backend="numpy")
    want = np.asarray(acc) * np.float32(0.004) + C.numpy()      # one per-tensor scale: A's
    assert np.array_equal(got.numpy().view(np.uint32), want.view(np.uint32))
    assert torch.equal(qa.dequantize(), torch.from_numpy(na.dequantize()))


class Net(torch.nn.Module):
    def __init__(self, k=64):
        super().__init__()
        torch.manual_seed(6)
        self.fc1, self.fc2 = torch.nn.Linear(k, 32), torch.nn.Linear(32, 16)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x))) + x[..., :16] @ torch.ones(16, 16)


@pytest.mark.parametrize("name", ["blackwell-nvfp4", "blackwell-mxf8f6f4-e5m2"])
def test_emulate_runs_a_network_on_a_block_scaled_unit(name):
    net, x = Net(), torch.randn(2, 3, 64, generator=torch.Generator().manual_seed(7))
    with torch.no_grad():
        with tt.emulate(name, backend="numpy"):
            got = net(x)
        x2 = x.reshape(-1, 64)
        h = torch.relu(tt.matmul(x2, net.fc1.weight.t(), net.fc1.bias, name, "numpy"))
        want = tt.matmul(h, net.fc2.weight.t(), net.fc2.bias, name, "numpy").reshape(2, 3, 16)
        want = want + torch.stack([tt.matmul(x[i, :, :16], torch.ones(16, 16), None, name, "numpy")
                                   for i in range(2)])
    assert torch.equal(got, want) and not got.requires_grad
    assert (got - net(x)).abs().max() < 0.5 * net(x).abs().max()


def test_emulate_passes_torchao_mx_weights_through():
    """torchao's own quantize_ (MX, its default RCEIL): weights stay as
    torchao made them and activations are quantised as their
    act_quant_kwargs say; the same as float weights under mx-rceil."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from torchao.prototype.mx_formats import MXDynamicActivationMXWeightConfig
        from torchao.quantization import quantize_
    net = Net().to(torch.bfloat16)
    x = torch.randn(4, 64, generator=torch.Generator().manual_seed(8)).to(torch.bfloat16)
    ao = Net().to(torch.bfloat16)
    ao.load_state_dict(net.state_dict())
    fp4 = torch.float4_e2m1fn_x2
    quantize_(ao, MXDynamicActivationMXWeightConfig(activation_dtype=fp4, weight_dtype=fp4))
    assert isinstance(ao.fc1.weight, MXTensor) and ao.fc1.weight.is_swizzled_scales
    with torch.no_grad():
        with tt.emulate("blackwell-mxf4", backend="numpy"):
            got = ao.fc2(torch.relu(ao.fc1(x)))
        with tt.emulate("blackwell-mxf4", backend="numpy", recipe="mx-rceil"):
            want = net.fc2(torch.relu(net.fc1(x)))
    assert got.dtype == torch.bfloat16 and torch.equal(got, want)


def test_emulate_passes_torchao_nvfp4_weights_through():
    """An NVFP4Tensor as torchao's NVFP4 workflow builds it (swizzled
    scales, a per-tensor scale, dynamic activation scales), made by hand
    here because the workflow itself refuses machines below sm_100."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from torchao.prototype.mx_formats.nvfp4_tensor import (
            QuantizeTensorToNVFP4Kwargs,
            per_tensor_amax_to_scale,
        )
    lin = torch.nn.Linear(64, 16)
    w = lin.weight.detach()
    W = NVFP4Tensor.to_nvfp4(w, per_tensor_scale=per_tensor_amax_to_scale(torch.max(torch.abs(w))),
                             is_swizzled_scales=True,
                             act_quant_kwargs=QuantizeTensorToNVFP4Kwargs(is_swizzled_scales=True,
                                                                          use_dynamic_per_tensor_scale=True))
    x = torch.randn(8, 64, generator=torch.Generator().manual_seed(9))
    with torch.no_grad(), tt.emulate("blackwell-nvfp4", backend="numpy"):
        got = torch.nn.functional.linear(x, W, lin.bias)
        want = torch.nn.functional.linear(x, w, lin.bias)
    assert torch.equal(got, want)
    # a calibrated activation scale (torchao's static NVFP4): the activation takes it
    Ws = NVFP4Tensor.to_nvfp4(w, per_tensor_scale=W.per_tensor_scale, is_swizzled_scales=True,
                              act_per_tensor_scale=torch.tensor(0.002),
                              act_quant_kwargs=QuantizeTensorToNVFP4Kwargs(
                                  is_swizzled_scales=True, use_dynamic_per_tensor_scale=False))
    with torch.no_grad(), tt.emulate("blackwell-nvfp4", backend="numpy"):
        got = torch.nn.functional.linear(x, Ws, lin.bias)
    qx = tt.quantize(x, "nvfp4", "e2m1", per_tensor_scale=0.002)
    qw = tt.quantize(w, "nvfp4", "e2m1")
    by_hand = tt.matmul(qx, tt.QuantizedTensor(qw.elements.t(), qw.scales.t(), 16, 0, qw.elem, qw.recipe,
                                               qw.per_tensor_scale), lin.bias, "blackwell-nvfp4", "numpy")
    assert torch.equal(got, by_hand)


def test_unscaled_fp4_and_fp6_models_take_float_tensors():
    A, B, C = operands(10)
    D = tt.matmul(A, B, C, model="blackwell-e2m1-fp32", backend="numpy")
    want = tcsmt.matmul(A.numpy(), B.numpy(), C.numpy(), model="blackwell-e2m1-fp32",
                        round_inputs="rne", backend="numpy")
    assert np.array_equal(D.numpy().view(np.uint32), np.asarray(want).view(np.uint32))


def test_what_does_not_fit_is_a_one_line_error():
    A, B, _ = operands(11)
    with pytest.raises(FormatMismatch, match="ue4m3"):
        tt.matmul(A, B, model="blackwell-mxf4", recipe="nvfp4")
    with pytest.raises(UserError, match="no block scales"):
        tt.emulate("hopper", recipe="mx-floor")
    q8 = tt.quantize(A, "mx-floor", "e4m3")
    with pytest.raises(FormatMismatch, match="reads float4_e2m1fn"):
        tt.matmul(q8, B, model="blackwell-nvfp4")
    mx = MXTensor.to_mx(A.contiguous(), torch.float8_e4m3fn, 32)
    with pytest.raises(FormatMismatch, match="reads float4_e2m1fn"):
        tt.matmul(mx, B, model="blackwell-mxf4")


def test_round_to_and_dtypes_on_tensors():
    t = torch.tensor([1 + 2.0 ** -11, 0.3, 7.0, -1e9])
    assert torch.equal(tt.round_to(t, "tf32"), torch.from_numpy(tq.round_to(t.numpy(), "tf32")))
    assert tt.round_to(t, "e4m3", "rz").dtype == torch.float8_e4m3fn
    assert tt.round_to(t, "e2m1").tolist() == [1.0, 0.5, 6.0, -6.0]
    d = tt.dtypes(choose("blackwell-nvfp4"))
    assert d == {"a": None, "b": None, "c": torch.float32, "d": torch.float32,
                 "scale": torch.float8_e4m3fn}
    assert tt.dtypes(choose("blackwell-mxf8f6f4-e5m2"))["scale"] == torch.float8_e8m0fnu


CUDA_SIM = """
import sys, torch
sys.path.insert(0, {tests!r})
from test_torch_scaled import operands
import tcsmt.torch as tt
from tcsmt.sim import kernels
assert kernels.cuda_available()
for name in ("blackwell-nvfp4",):
    A, B, C = operands(12, 5, 64, 6)
    assert torch.equal(tt.matmul(A, B, C, model=name, backend="cuda"),
                       tt.matmul(A, B, C, model=name, backend="numpy")), name
    print(name, "ok")
"""


def test_block_scaled_products_through_the_cuda_kernel_under_the_simulator(tmp_path):
    """The CUDA kernel's path from torch (Numba's CUDA simulator: no GPU
    here; a CUDA tensor takes this path with backend left out)."""
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", TCSMT_KERNEL_CACHE=str(tmp_path))
    r = subprocess.run([sys.executable, "-c", CUDA_SIM.format(tests=str(Path(__file__).parent))],
                       env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.count(" ok") == 1


def test_forward_only_says_so_on_the_backward_pass():
    lin = torch.nn.Linear(32, 4)
    x = torch.randn(3, 32)
    for model in ("blackwell-nvfp4", "hopper-fp16-fp32"):
        with tt.emulate(model, backend="numpy"):
            y = lin(x)
        assert y.requires_grad
        with pytest.raises(UserError, match="forward pass only"):
            y.sum().backward()


def test_block_scaled_operands_into_an_unscaled_model_are_refused():
    A, B, _ = operands(13)
    q = tt.quantize(A, "mx-floor", "e4m3")
    with pytest.raises(FormatMismatch, match="no block scales"):
        tt.matmul(q, B, model="hopper-e4m3-fp32")
