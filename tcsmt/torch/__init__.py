"""PyTorch through an emulated matrix unit.

``matmul(A, B, C=None, model=...)`` computes D = C + A @ B on torch tensors
of any device as the model's unit does, bit for bit; ``emulate(model)`` is
a context in which ``torch.matmul``, ``@``, ``torch.nn.functional.linear``
and ``torch.bmm`` do so, so a whole network's forward pass runs under a
unit's arithmetic::

    with tcsmt.torch.emulate("hopper"):
        logits = net(x)

What a kernel on that unit would do, and what this does:

* A and B are rounded to the model's input format with round to nearest,
  ties to even (a float32 tensor fed to an fp16 unit, as PyTorch's own
  casts and autocast do); tf32 reads the top 19 bits of float32 operands.
* C (the bias of ``linear``, zero for the others) is rounded to the
  model's c format the same way and enters the accumulation as the unit's
  c, as cuBLAS's addmm does with a bias.
* Products are summed block after block along K as the unit does
  (tcsmt.datapath), and D comes out in the model's output format, then
  converted to A's dtype (round to nearest even) when that differs.

Block-scaled models (MX: kind::mxf8f6f4, mxf4, mxf4nvf4 with ue8m0
scales; NVFP4: mxf4nvf4 with ue4m3 scales per 16) read quantised
operands (tcsmt.torch.scaled, tcsmt.torch.operands):

* float tensors are quantised by a named recipe (``recipe=``; by default
  the one the model's instruction expects: mx-floor for ue8m0, nvfp4, the
  two-level recipe with a per-tensor scale, for ue4m3), bit for bit as
  torchao quantises (tcsmt.quant);
* ``tcsmt.torch.quantize``'s QuantizedTensor and torchao's MXTensor and
  NVFP4Tensor (a model quantised by torchao's quantize_) pass through as
  they are; an activation meeting a torchao weight is quantised as the
  weight's act_quant_kwargs say;
* the unit scales and accumulates the products; NVFP4's per-tensor scales
  multiply D afterwards, in float32, and a bias is then added.

Forward only: where gradients are recorded, a backward pass through a
result fails with one line saying so (tcsmt.errors.UserError); under
torch.no_grad() results are plain tensors. CPU tensors are read through NumPy views of their memory
(no copy); CUDA tensors stay on the device (the CUDA kernel reads them
through the CUDA array interface; block-scaled operands are quantised on
the host). PyTorch is an optional dependency: ``pip install torch`` (this
project's tests use ``torch==2.13.0``, the CPU build).
"""

from __future__ import annotations

from collections.abc import Callable

try:
    import torch
except ModuleNotFoundError:
    raise ModuleNotFoundError("tcsmt.torch needs PyTorch: pip install torch==2.13.0 (the CPU build), "
                              "or pip install 'tcsmt[torch]'") from None
from torch.overrides import TorchFunctionMode

from tcsmt.errors import FormatMismatch, UserError
from tcsmt.model.choose import choose
from tcsmt.model.params import ModelParams
from tcsmt.torch.bits import from_bits_cuda, from_bits_np, to_bits_cuda, to_bits_np
from tcsmt.torch.formats import dtypes, quantize, round_to
from tcsmt.torch.operands import QuantizedTensor, activation_recipe
from tcsmt.torch.scaled import scaled_batched, scaled_matmul

__all__ = ["QuantizedTensor", "dtypes", "emulate", "matmul", "model_of", "quantize", "round_to"]


def model_of(model) -> ModelParams:
    """A ModelParams, a model name or file, or an architecture (its default model)."""
    return model if isinstance(model, ModelParams) else choose(model)


def matmul(A: torch.Tensor, B: torch.Tensor, C: torch.Tensor | None = None, model="hopper",
           backend: str | None = None, recipe: str | None = None) -> torch.Tensor:
    """D = C + A @ B for A [M, K], B [K, N], C [M, N] (or None: zero, or any
    shape that broadcasts to [M, N]), as the model's unit computes it; D
    in the model's output format on A's device (see the module doc). For
    a block-scaled model, A and B may be float tensors (quantised by
    ``recipe``, the model's by default), QuantizedTensors or torchao's
    MXTensor / NVFP4Tensor (B as a transposed view of a [N, K] weight)."""
    return forward_only(_matmul(A, B, C, model, backend, recipe), A, B, C)


def _matmul(A, B, C, model, backend, recipe) -> torch.Tensor:
    p = model_of(model)
    if p.scale_format:
        return scaled_matmul(p, A, B, C, recipe, backend)
    _unscaled_operands(p, A, B)
    if recipe is not None:
        raise UserError(f"{p.name} has no block scales: its operands are rounded, not quantised "
                        "(leave out recipe)")
    m, n = A.shape[0], B.shape[1]
    C = torch.zeros((m, n), dtype=torch.float32, device=A.device) if C is None else C
    C = C.expand(m, n)
    if A.device.type == "cuda":
        return _matmul_cuda(p, A, B, C)
    from tcsmt.sim.batch import matmul_bits
    at = to_bits_np(A.t(), p.fin, "A")
    bt = to_bits_np(B, p.fb, "B")
    ct = to_bits_np(C, p.fc, "C")
    d = matmul_bits(p, at, bt, ct, backend=backend)
    return from_bits_np(d, p.fout, A.device)


def _unscaled_operands(p: ModelParams, *xs) -> None:
    for x in xs:
        if isinstance(x, QuantizedTensor) or type(x).__name__ in ("MXTensor", "NVFP4Tensor"):
            raise FormatMismatch(f"{p.name} has no block scales: it takes float tensors, not the "
                                 f"block-scaled {type(x).__name__}")


class _ForwardOnly(torch.autograd.Function):
    """D as it is, with a backward pass that says there is none."""

    @staticmethod
    def forward(ctx, d, *inputs):
        return d.view_as(d)

    @staticmethod
    def backward(ctx, *grads):
        raise UserError("tcsmt.torch computes the forward pass only: the emulated unit's products "
                        "have no gradient (run the backward pass outside emulate(), or the forward "
                        "pass under torch.no_grad())")


def forward_only(d: torch.Tensor, *inputs) -> torch.Tensor:
    """d, marked so that a backward pass through it fails with one line
    (where gradients are being recorded and an input asks for one)."""
    if torch.is_grad_enabled() and any(isinstance(x, torch.Tensor) and x.requires_grad for x in inputs):
        return _ForwardOnly.apply(d, *(x for x in inputs if isinstance(x, torch.Tensor)))
    return d


def _matmul_cuda(p: ModelParams, A, B, C) -> torch.Tensor:
    from numba import cuda

    from tcsmt.sim.kernels import run_cuda
    a, b, c = to_bits_cuda(A, p.fin), to_bits_cuda(B, p.fb), to_bits_cuda(C, p.fc)
    views = [cuda.as_cuda_array(x.contiguous()).view("u8") for x in (a, b, c)]
    d = run_cuda(p, *views)
    return from_bits_cuda(torch.as_tensor(d, device=A.device).view(torch.int64), p.fout)


def _batched(p: ModelParams, A: torch.Tensor, B: torch.Tensor, C, backend) -> torch.Tensor:
    """torch.matmul's shapes: vectors, matrices and broadcast batches."""
    a = A.unsqueeze(0) if A.dim() == 1 else A
    b = B.unsqueeze(-1) if B.dim() == 1 else B
    batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = a.expand(*batch, *a.shape[-2:]).reshape(-1, *a.shape[-2:])
    b = b.expand(*batch, *b.shape[-2:]).reshape(-1, *b.shape[-2:])
    outs = [matmul(x, y, C, p, backend) for x, y in zip(a, b)]
    d = torch.stack(outs).reshape(*batch, a.shape[-2], b.shape[-1])
    if A.dim() == 1:
        d = d.squeeze(-2)
    if B.dim() == 1:
        d = d.squeeze(-1)
    return d.to(A.dtype) if d.dtype != A.dtype else d


class emulate(TorchFunctionMode):
    """Inside ``with emulate(model):``, matrix products run on the model's
    unit (see the module doc); everything else runs as usual."""

    def __init__(self, model="hopper", backend: str | None = None, recipe: str | None = None):
        super().__init__()
        self.model = model_of(model)
        self.backend = backend
        self.recipe = recipe
        if self.model.scale_format:
            from tcsmt.quant import recipe_for
            recipe_for(self.model, recipe)              # a recipe the model reads, or a one-line error
        elif recipe is not None:
            raise UserError(f"{self.model.name} has no block scales: leave out recipe")

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in _PRODUCTS:
            return forward_only(_PRODUCTS[func](self, *args, **kwargs), *args, *kwargs.values())
        return func(*args, **kwargs)

    def _product(self, A, B):
        if self.model.scale_format:
            d = scaled_batched(self.model, A, B, self.recipe, self.backend)
            return _as_input(d, A)
        return _batched(self.model, A, B, None, self.backend)

    def _matmul(self, A, B, out=None):
        return _result(self._product(A, B), out)

    def _rmatmul(self, B, A):
        return self._product(A, B)

    def _linear(self, x, weight, bias=None):
        if not self.model.scale_format:
            return _batched(self.model, x, weight.t(), bias, self.backend)
        recipe, pts = activation_recipe(weight, self.recipe)
        x2 = x.reshape(-1, x.shape[-1])
        d = scaled_matmul(self.model, x2, weight.t(), bias, self.recipe, self.backend, recipe, pts)
        return _as_input(d.reshape(*x.shape[:-1], d.shape[-1]), x)

    _bmm = _matmul


def _as_input(d: torch.Tensor, x) -> torch.Tensor:
    """D in the dtype of the activation (a torchao tensor's original dtype)."""
    want = getattr(x, "orig_dtype", None) or x.dtype
    return d.to(want) if d.dtype != want else d


def _result(d: torch.Tensor, out):
    if out is None:
        return d
    out.copy_(d)
    return out


_PRODUCTS: dict[object, Callable] = {torch.matmul: emulate._matmul, torch.Tensor.matmul: emulate._matmul,
                                     torch.Tensor.__matmul__: emulate._matmul,
                                     torch.Tensor.__rmatmul__: emulate._rmatmul,
                                     torch.nn.functional.linear: emulate._linear, torch.bmm: emulate._bmm,
                                     torch.Tensor.bmm: emulate._bmm}
