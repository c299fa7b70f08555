"""Checks PyTorch tensors (or any object with the same attributes) and streams against an ltx
call before it reaches the library, and derives the call's shape from them.

A tensor-like object has data_ptr(), shape, dtype (whose str() is a torch dtype name such as
"torch.bfloat16"), is_contiguous() and device (with .type and .index). A stream is an int (a
cudaStream_t value; 0 is the legacy default stream), an object with a `cuda_stream` attribute
(torch.cuda.Stream), or None (PyTorch's current stream of the tensor's GPU, else 0).
"""

from __future__ import annotations

import math
import sys

from .errors import invalid_argument

# str(torch dtype) -> ltx_data_type.
DTYPES = {
    "torch.bfloat16": 1,
    "torch.float16": 2,
    "torch.float32": 3,
    "torch.float8_e4m3fn": 4,
    "torch.float8_e5m2": 5,
    "torch.int8": 6,
    "torch.uint8": 7,
    "torch.int16": 8,
    "torch.uint16": 9,
    "torch.int32": 10,
    "torch.uint32": 11,
    "torch.int64": 12,
    "torch.uint64": 13,
    "torch.float64": 14,
    "torch.bool": 15,
    "torch.complex64": 16,
    "torch.complex128": 17,
}

# The dtypes of DTYPES that the reductions (AllReduce, ReduceScatter) take.
REDUCE_DTYPES = {name: DTYPES[name] for name in ("torch.bfloat16", "torch.float16",
                                                 "torch.float32")}


def dtype_code(tensor, what: str, reduce: bool = False) -> int:
    """The ltx_data_type of `tensor`; InvalidArgumentError for a dtype outside DTYPES, or with
    `reduce` outside REDUCE_DTYPES."""
    name = str(getattr(tensor, "dtype", None))
    table = REDUCE_DTYPES if reduce else DTYPES
    code = table.get(name)
    if code is None:
        raise invalid_argument(f"{what} has dtype {name}; ltx {'reduces' if reduce else 'moves'} "
                               f"{', '.join(table)}")
    return code


def stream_handle(stream, device_index: int) -> int:
    """The cudaStream_t value of `stream` (see the module comment), after checking that a stream
    that names its GPU (a torch stream's .device) is on cuda:`device_index`."""
    if stream is None:
        torch = sys.modules.get("torch")
        if torch is None or not torch.cuda.is_available():
            return 0
        stream = torch.cuda.current_stream(device_index)
    handle = getattr(stream, "cuda_stream", stream)
    if isinstance(handle, bool) or not isinstance(handle, int) or handle < 0:
        raise invalid_argument(
            f"stream {stream!r} is neither a stream handle (int) nor has .cuda_stream")
    place = getattr(stream, "device", None)  # A torch stream says its GPU; a handle does not.
    if getattr(place, "index", device_index) != device_index:
        raise invalid_argument(f"stream {stream!r} is on {place}, but its rank runs on "
                               f"cuda:{device_index}")
    return handle


def _check_tensor(tensor, what: str, device: int) -> tuple:
    """The shape of `tensor` after checking it is a contiguous tensor on GPU `device` whose bytes
    are its values (no conjugate or negative bit)."""
    for attribute in ("data_ptr", "shape", "is_contiguous", "device"):
        if not hasattr(tensor, attribute):
            raise invalid_argument(f"{what} is not a tensor (it has no .{attribute})")
    if not tensor.is_contiguous():
        raise invalid_argument(f"{what} is not contiguous")
    for lazy in ("is_conj", "is_neg"):  # A view whose bytes are not its values yet.
        if getattr(tensor, lazy, lambda: False)():
            raise invalid_argument(
                f"{what} has its {lazy[3:]} bit set: its bytes are not its values "
                "(resolve_conj() / resolve_neg() first)")
    place = tensor.device
    if getattr(place, "type", None) != "cuda" or getattr(place, "index", None) != device:
        raise invalid_argument(f"{what} is on {place}, but its rank runs on cuda:{device}")
    return tuple(int(n) for n in tensor.shape)


def _checked_pair(rank: int, input, output, device: int, reduce: bool = False) -> tuple:
    """The shapes of rank `rank`'s tensors and their ltx dtype, after checking both are
    contiguous tensors on cuda:`device` of one ltx dtype (one the reductions take, with
    `reduce`)."""
    in_shape = _check_tensor(input, f"input of rank {rank}", device)
    out_shape = _check_tensor(output, f"output of rank {rank}", device)
    dtype = dtype_code(input, f"input of rank {rank}", reduce)
    if dtype_code(output, f"output of rank {rank}", reduce) != dtype:
        raise invalid_argument(
            f"rank {rank}: input is {input.dtype} but output is {output.dtype}")
    return in_shape, out_shape, dtype


def rank_call(rank: int, input, output, counts, dim: int, device: int,
              scatter: bool = False) -> tuple:
    """Checks rank `rank`'s AllGather tensors: contiguous, on cuda:`device`, one ltx dtype,
    shapes that agree except along the token dimension `dim`, where the input has
    counts[rank] tokens and the output sum(counts). With `scatter`, checks its ReduceScatter
    tensors instead: the same shapes with input and output swapped, of a dtype the reductions
    take. Returns ((dtype, batch, hidden), input pointer, output pointer): batch is the product
    of the dimensions before `dim`, hidden of those after it."""
    in_shape, out_shape, dtype = _checked_pair(rank, input, output, device, scatter)
    if len(in_shape) != len(out_shape) or not -len(in_shape) <= dim < len(in_shape):
        raise invalid_argument(
            f"rank {rank}: input {list(in_shape)} and output {list(out_shape)} need the same "
            f"rank, with a token dimension {dim}")
    d = dim % len(in_shape)
    shard = out_shape if scatter else in_shape
    expected = (_with_size(shard, d, counts[rank]), all_gather_output_shape(shard, counts, dim))
    expected_in, expected_out = expected[::-1] if scatter else expected
    if in_shape != expected_in or out_shape != expected_out:
        raise invalid_argument(
            f"rank {rank}: input {list(in_shape)} and output {list(out_shape)} do not match "
            f"token counts {list(counts)} along dimension {d} (expected {list(expected_in)} "
            f"and {list(expected_out)})")
    return ((dtype, math.prod(shard[:d]), math.prod(shard[d + 1:])),
            input.data_ptr(), output.data_ptr())


def all_reduce_rank_call(rank: int, input, output, device: int) -> tuple:
    """Checks rank `rank`'s AllReduce tensors: contiguous, on cuda:`device`, of one dtype the
    reductions take, of one shape; the output may be the input itself (in place). Returns
    ((dtype, element count), input pointer, output pointer)."""
    in_shape, out_shape, dtype = _checked_pair(rank, input, output, device, reduce=True)
    if in_shape != out_shape:
        raise invalid_argument(
            f"rank {rank}: input {list(in_shape)} and output {list(out_shape)} differ in shape")
    return (dtype, math.prod(in_shape)), input.data_ptr(), output.data_ptr()


def rmsnorm_rank_call(rank: int, input, output, residual, residual_out, weight,
                      device: int) -> tuple:
    """Checks rank `rank`'s tensors of the AllReduce with the fused RMSNorm epilogue:
    contiguous, on cuda:`device`, of one dtype the reductions take; input, output, residual and
    residual_out of one shape [..., hidden] (hidden its last dimension, at least one), weight of
    hidden elements. residual_out may be the residual itself (in place). Returns ((dtype, rows,
    hidden), (input, output, residual, residual_out, weight) pointers)."""
    in_shape, out_shape, dtype = _checked_pair(rank, input, output, device, reduce=True)
    named = [("residual", residual), ("residual_out", residual_out), ("weight", weight)]
    shapes = {}
    for name, tensor in named:
        shapes[name] = _check_tensor(tensor, f"{name} of rank {rank}", device)
        if dtype_code(tensor, f"{name} of rank {rank}", reduce=True) != dtype:
            raise invalid_argument(
                f"rank {rank}: input is {input.dtype} but {name} is {tensor.dtype}")
    if not in_shape or in_shape[-1] < 1:
        raise invalid_argument(
            f"rank {rank}: input {list(in_shape)} has no hidden dimension (its last)")
    for name, shape in [("output", out_shape), ("residual", shapes["residual"]),
                        ("residual_out", shapes["residual_out"])]:
        if shape != in_shape:
            raise invalid_argument(
                f"rank {rank}: input {list(in_shape)} and {name} {list(shape)} differ in shape")
    hidden = in_shape[-1]
    if math.prod(shapes["weight"]) != hidden:
        raise invalid_argument(f"rank {rank}: weight {list(shapes['weight'])} does not have "
                               f"hidden = {hidden} elements")
    pointers = tuple(t.data_ptr() for t in (input, output, residual, residual_out, weight))
    return (dtype, math.prod(in_shape) // hidden, hidden), pointers


def _with_size(shape: tuple, d: int, size) -> tuple:
    """`shape` with `size` as its dimension `d`."""
    return shape[:d] + (size,) + shape[d + 1:]


def _token_dimension(shape: tuple, dim: int) -> int:
    """The index of the token dimension `dim` of `shape`; InvalidArgumentError when there is
    none."""
    if not -len(shape) <= dim < len(shape):
        raise invalid_argument(f"input {list(shape)} has no token dimension {dim}")
    return dim % len(shape)


def all_gather_output_shape(input_shape, counts, dim: int) -> tuple:
    """The shape of every AllGather output for an input of `input_shape`: sum(counts) along the
    token dimension `dim`, the other dimensions unchanged. InvalidArgumentError when the input
    has no dimension `dim`. The sizes may be symbolic (torch.SymInt)."""
    shape = tuple(input_shape)
    return _with_size(shape, _token_dimension(shape, dim), sum(counts))


def reduce_scatter_output_shape(input_shape, rank: int, counts, dim: int) -> tuple:
    """The shape of rank `rank`'s ReduceScatter output for an input of `input_shape` over
    len(counts) ranks: counts[rank] along the token dimension `dim`, the other dimensions
    unchanged. InvalidArgumentError for a rank out of range or an input without dimension
    `dim`; the call itself checks the rest. The sizes may be symbolic (torch.SymInt)."""
    shape = tuple(input_shape)
    if not 0 <= rank < len(counts):
        raise invalid_argument(f"rank {rank} of {len(counts)}: expected a rank below "
                               f"{len(counts)}")
    return _with_size(shape, _token_dimension(shape, dim), counts[rank])


def all_to_all_output_shape(input_shape, rank: int, counts, seq_to_heads: bool,
                            head_counts=None) -> tuple:
    """The shape of rank `rank`'s all-to-all output for an input of `input_shape` over
    len(counts) ranks: sequence -> heads turns [batch, counts[rank], heads, head_dim] into
    [batch, sum(counts), H_rank, head_dim], heads -> sequence the reverse, where H_rank is
    head_counts[rank], or heads / len(counts) without head_counts. InvalidArgumentError for a
    rank out of range or an input that is not 4-dimensional; the call itself checks the rest.
    The sizes may be symbolic (torch.SymInt)."""
    shape = tuple(input_shape)
    ranks = len(counts)
    if not 0 <= rank < ranks or len(shape) != 4:
        raise invalid_argument(
            f"rank {rank} of {ranks} with input {list(shape)}: expected a rank below {ranks} "
            f"and a [batch, tokens, heads, head_dim] input")
    batch, _, heads, head_dim = shape
    if seq_to_heads:
        rank_heads = heads // ranks if head_counts is None else head_counts[rank]
        return (batch, sum(counts), rank_heads, head_dim)
    all_heads = heads * ranks if head_counts is None else sum(head_counts)
    return (batch, counts[rank], all_heads, head_dim)


def alltoall_rank_call(rank: int, input, output, counts, world_size: int, seq_to_heads: bool,
                       device: int, head_counts=None) -> tuple:
    """Checks rank `rank`'s all-to-all tensors: contiguous, on cuda:`device`, one ltx dtype;
    the sequence-sharded one (the input for sequence -> heads, else the output) is
    [batch, counts[rank], heads, head_dim], the head-sharded one
    [batch, sum(counts), head_counts[rank], head_dim]; without head_counts (None), heads must
    be divisible by `world_size` and each rank holds heads / world_size. The library checks
    that head_counts sum to heads. Returns ((dtype, batch, heads, head_dim), input pointer,
    output pointer)."""
    in_shape, out_shape, dtype = _checked_pair(rank, input, output, device)
    names = ("input", "output") if seq_to_heads else ("output", "input")
    seq_shape, head_shape = (in_shape, out_shape) if seq_to_heads else (out_shape, in_shape)
    if len(seq_shape) != 4:
        raise invalid_argument(
            f"rank {rank}: {names[0]} {list(seq_shape)} is not [batch, tokens, heads, head_dim]")
    batch, _, heads, head_dim = seq_shape
    if head_counts is None and heads % world_size:
        raise invalid_argument(
            f"rank {rank}: {heads} heads do not divide among {world_size} ranks; pass "
            f"head_counts for an uneven split")
    expected_seq = (batch, counts[rank], heads, head_dim)
    expected_head = all_to_all_output_shape(seq_shape, rank, counts, True, head_counts)
    if seq_shape != expected_seq or head_shape != expected_head:
        raise invalid_argument(
            f"rank {rank}: {names[0]} {list(seq_shape)} and {names[1]} {list(head_shape)} do "
            f"not match token counts {list(counts)} over {world_size} ranks (expected "
            f"{list(expected_seq)} and {list(expected_head)})")
    return (dtype, batch, heads, head_dim), input.data_ptr(), output.data_ptr()


def token_counts(inputs, dim: int) -> list:
    """The token counts of a coordinated call: each input's size along `dim`."""
    counts = []
    for rank, tensor in enumerate(inputs):
        shape = tuple(getattr(tensor, "shape", ()))
        if not -len(shape) <= dim < len(shape) or not shape:
            raise invalid_argument(f"input of rank {rank} has no dimension {dim}")
        counts.append(int(shape[dim]))
    return counts
