"""ltx's per-rank calls as PyTorch custom ops, which torch.compile(fullgraph=True) traces and
torch.cuda.graph captures:

    import ltx, ltx.torch_ops, torch
    runtime = ltx.Runtime(devices=[0, 1])
    handle = ltx.torch_ops.register_runtime(runtime)
    # Rank r's step, on rank r's stream (torch.cuda.stream); every rank makes the same calls.
    gathered = torch.ops.ltx.all_gather(x, handle, r, counts)              # dim=-2 by default
    by_heads = torch.ops.ltx.all_to_all(q, handle, r, counts, "seq_to_heads")
    summed = torch.ops.ltx.all_reduce(partial, handle, r, "sum")
    shard = torch.ops.ltx.reduce_scatter(partial, handle, r, counts, "sum")  # dim=-2 by default
    normed, residual = torch.ops.ltx.all_reduce_rmsnorm(partial, residual, weight, handle, r,
                                                        1e-6)

Importing this module needs PyTorch 2.4 or later (torch.library.custom_op) and registers the
ops in the namespace `ltx`; `import ltx` alone never imports torch. Each op is the per-rank call
(Runtime.all_gather_rank, all_to_all_rank, all_reduce_rank, reduce_scatter_rank,
all_reduce_rmsnorm_rank) into new tensors, enqueued on the current stream of the input's GPU
with no host synchronisation. The ops are functional: they mutate nothing and return tensors
that alias no input; their fake implementations give the outputs' shapes and dtypes, so torch.compile needs no GPU to trace them.
They have no autograd formula.

A Runtime reaches the ops through an integer handle, which torch.compile keeps as a constant of
the graph: register_runtime gives it, and the ops look the Runtime up in this module's table.
The table holds the Runtime weakly: keep the Runtime alive (and open) while graphs that use
its handle run.
"""

import itertools
import typing
import weakref

try:
    import torch
except ImportError as e:
    raise ImportError("ltx.torch_ops needs PyTorch 2.4 or later; `import ltx` works without "
                      "it") from e

from .errors import invalid_argument
from .runtime import DIRECTIONS, REDUCTIONS, Runtime, enum_value
from .tensors import (all_gather_output_shape, all_to_all_output_shape, dtype_code,
                      reduce_scatter_output_shape)

if not hasattr(torch.library, "custom_op"):
    raise ImportError(f"ltx.torch_ops needs PyTorch 2.4 or later (torch.library.custom_op); "
                      f"this is torch {torch.__version__}")

_runtimes = weakref.WeakValueDictionary()  # handle -> Runtime
_handles = itertools.count(1)


def register_runtime(runtime: Runtime) -> int:
    """The handle (an int > 0) under which the ops find `runtime`; the same handle each time
    for the same Runtime."""
    if not isinstance(runtime, Runtime):
        raise invalid_argument(f"{runtime!r} is not an ltx.Runtime")
    for handle, known in list(_runtimes.items()):
        if known is runtime:
            return handle
    handle = next(_handles)
    _runtimes[handle] = runtime
    return handle


def runtime_of(handle: int) -> Runtime:
    """The Runtime registered under `handle`; InvalidArgumentError when there is none (never
    registered, or garbage collected since)."""
    runtime = _runtimes.get(handle)
    if runtime is None:
        raise invalid_argument(f"no ltx.Runtime is registered under handle {handle} "
                               f"(ltx.torch_ops.register_runtime gives handles)")
    return runtime


def _rank_op(runtime: int, rank: int, make_outputs, prepare):
    """Rank `rank`'s call on the Runtime of handle `runtime`: the new outputs make_outputs()
    returns, then the RankCall that prepare(ltx_runtime, outputs) returns made; returns the
    outputs. An argument refused on the way, the outputs' shapes included, stops the Runtime as
    a refused per-rank call does (the peers may be waiting in their op:
    Runtime.all_gather_rank)."""
    ltx_runtime = runtime_of(runtime)
    made = []

    def prepared():
        made.append(make_outputs())
        return prepare(ltx_runtime, made[0])
    ltx_runtime._call_rank_now(rank, prepared)
    return made[0]


def _all_to_all_shape(input: torch.Tensor, rank: int, counts: typing.List[int],
                      direction: str, head_counts: typing.Optional[typing.List[int]]) -> tuple:
    """The output shape of torch.ops.ltx.all_to_all (see all_to_all_output_shape)."""
    enum_value(DIRECTIONS, direction, "direction")
    return all_to_all_output_shape(input.shape, rank, counts, direction == "seq_to_heads",
                                   head_counts)


@torch.library.custom_op("ltx::all_gather", mutates_args=(), device_types="cuda")
def all_gather(input: torch.Tensor, runtime: int, rank: int, counts: typing.List[int],
               dim: int = -2) -> torch.Tensor:
    """Rank `rank`'s AllGather over the Runtime of handle `runtime`: returns a new tensor of
    the input's shape with sum(counts) along `dim`, rank s's tokens at offset
    counts[0] + ... + counts[s - 1] (Runtime.all_gather_rank)."""
    input = input.contiguous()
    return _rank_op(
        runtime, rank, lambda: input.new_empty(all_gather_output_shape(input.shape, counts, dim)),
        lambda ltx_runtime, output: ltx_runtime.prepare_all_gather_rank(rank, input, output,
                                                                         counts, dim=dim))


@all_gather.register_fake
def _all_gather_fake(input, runtime, rank, counts, dim=-2):
    return input.new_empty(all_gather_output_shape(input.shape, counts, dim))


@torch.library.custom_op("ltx::all_to_all", mutates_args=(), device_types="cuda")
def all_to_all(input: torch.Tensor, runtime: int, rank: int, counts: typing.List[int],
               direction: str, head_counts: typing.Optional[typing.List[int]] = None
               ) -> torch.Tensor:
    """Rank `rank`'s Ulysses all-to-all over the Runtime of handle `runtime`: "seq_to_heads"
    turns [batch, counts[rank], heads, head_dim] into a new [batch, sum(counts), H_rank,
    head_dim], "heads_to_seq" the reverse; H_rank is head_counts[rank], or heads / len(counts)
    without head_counts (Runtime.all_to_all_rank)."""
    input = input.contiguous()
    return _rank_op(
        runtime, rank,
        lambda: input.new_empty(_all_to_all_shape(input, rank, counts, direction, head_counts)),
        lambda ltx_runtime, output: ltx_runtime.prepare_all_to_all_rank(
            rank, input, output, counts, direction=direction, head_counts=head_counts))


@all_to_all.register_fake
def _all_to_all_fake(input, runtime, rank, counts, direction, head_counts=None):
    return input.new_empty(_all_to_all_shape(input, rank, counts, direction, head_counts))


def _reduced(input: torch.Tensor, reduction: str) -> None:
    """Checks what the reduction ops can tell from the input alone: a dtype the reductions
    take and a known reduction."""
    dtype_code(input, "input", reduce=True)
    enum_value(REDUCTIONS, reduction, "reduction")


@torch.library.custom_op("ltx::all_reduce", mutates_args=(), device_types="cuda")
def all_reduce(input: torch.Tensor, runtime: int, rank: int, reduction: str) -> torch.Tensor:
    """Rank `rank`'s AllReduce over the Runtime of handle `runtime`: returns a new tensor of
    the input's shape, the element-wise `reduction` ("sum", "max", "min") of every rank's
    input, the same bits on every rank (Runtime.all_reduce_rank)."""
    input = input.contiguous()
    return _rank_op(
        runtime, rank, lambda: input.new_empty(input.shape),
        lambda ltx_runtime, output: ltx_runtime.prepare_all_reduce_rank(rank, input, output,
                                                                         reduction))


@all_reduce.register_fake
def _all_reduce_fake(input, runtime, rank, reduction):
    _reduced(input, reduction)
    return input.new_empty(input.shape)


@torch.library.custom_op("ltx::reduce_scatter", mutates_args=(), device_types="cuda")
def reduce_scatter(input: torch.Tensor, runtime: int, rank: int, counts: typing.List[int],
                   reduction: str, dim: int = -2) -> torch.Tensor:
    """Rank `rank`'s ReduceScatter over the Runtime of handle `runtime`: returns a new tensor
    of the input's shape with counts[rank] along `dim`, the element-wise `reduction` over
    every rank's input of the tokens [counts[0] + ... + counts[rank - 1], + counts[rank])
    (Runtime.reduce_scatter_rank)."""
    input = input.contiguous()
    return _rank_op(
        runtime, rank,
        lambda: input.new_empty(reduce_scatter_output_shape(input.shape, rank, counts, dim)),
        lambda ltx_runtime, output: ltx_runtime.prepare_reduce_scatter_rank(
            rank, input, output, counts, reduction=reduction, dim=dim))


@reduce_scatter.register_fake
def _reduce_scatter_fake(input, runtime, rank, counts, reduction, dim=-2):
    _reduced(input, reduction)
    return input.new_empty(reduce_scatter_output_shape(input.shape, rank, counts, dim))


def _rmsnorm_checked(input: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor) -> None:
    """Checks what the RMSNorm op can tell from its tensors' metadata alone: one dtype the
    reductions take, the residual of the input's shape, a weight of its last dimension."""
    dtype_code(input, "input", reduce=True)
    if residual.dtype != input.dtype or weight.dtype != input.dtype:
        raise invalid_argument(f"input is {input.dtype}, residual {residual.dtype} and weight "
                               f"{weight.dtype}: they need one dtype")
    if input.dim() < 1 or tuple(residual.shape) != tuple(input.shape) or \
            weight.numel() != input.shape[-1]:
        raise invalid_argument(
            f"input {list(input.shape)}, residual {list(residual.shape)} and weight "
            f"{list(weight.shape)}: the residual needs the input's shape and the weight its "
            f"last dimension's size")


@torch.library.custom_op("ltx::all_reduce_rmsnorm", mutates_args=(), device_types="cuda")
def all_reduce_rmsnorm(input: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
                       runtime: int, rank: int,
                       eps: float) -> typing.Tuple[torch.Tensor, torch.Tensor]:
    """Rank `rank`'s AllReduce with the fused residual-add + RMSNorm epilogue over the Runtime
    of handle `runtime` (Runtime.all_reduce_rmsnorm_rank): returns new tensors (output,
    residual_out) of the input's shape, residual_out = sum + residual and output =
    RMSNorm(residual_out) * weight over the last dimension, the same bits on every rank."""
    input, residual, weight = input.contiguous(), residual.contiguous(), weight.contiguous()
    return _rank_op(
        runtime, rank, lambda: (input.new_empty(input.shape), residual.new_empty(input.shape)),
        lambda ltx_runtime, outputs: ltx_runtime.prepare_all_reduce_rmsnorm_rank(
            rank, input, outputs[0], residual, weight, outputs[1], eps=eps))


@all_reduce_rmsnorm.register_fake
def _all_reduce_rmsnorm_fake(input, residual, weight, runtime, rank, eps):
    _rmsnorm_checked(input, residual, weight)
    return input.new_empty(input.shape), residual.new_empty(input.shape)
