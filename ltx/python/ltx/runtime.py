"""ltx.Runtime: the AllGather, Ulysses all-to-all, AllReduce and ReduceScatter runtime of
libltx.so for PyTorch tensors.

    import ltx, torch
    runtime = ltx.Runtime(devices=[0, 1])
    # Coordinated call from any thread: every rank's tensors at once.
    runtime.all_gather(inputs, outputs)              # counts from the inputs' token dimension
    # Per-rank call from each GPU's own thread; can be captured with torch.cuda.graph.
    runtime.all_gather_rank(rank, inputs[rank], outputs[rank], counts)
    # Ulysses all-to-all: [batch, seq_r, heads, head_dim] -> [batch, sum(seq), heads/P, head_dim].
    runtime.all_to_all(q_shards, q_heads, direction="seq_to_heads")
    # AllReduce (bf16, fp16, fp32; in place when an output is its input) and ReduceScatter.
    runtime.all_reduce(partials, partials, "sum")
    runtime.reduce_scatter(partials, shards, counts, reduction="max")  # shards[r]: counts[r]

Tensors are [..., tokens, ...]: rank r's input has counts[r] tokens along the token dimension
`dim` (default -2, e.g. [batch, tokens, hidden] or [tokens, hidden]) and every output has
sum(counts); the other dimensions agree. Errors raise ltx.Error subclasses with the library's
code and message (ltx.DeadlineExceededError, ltx.InvalidArgumentError, ...); the semantics are
those of ltx/c_api.h. The GIL is released while the library runs.
"""

from __future__ import annotations

import ctypes
import functools
import math
import numbers
import operator
import weakref

from . import _library
from ._library import (MAX_TENSORS, AllGatherShape, AllReduceRmsNormShape, AllReduceShape,
                       AllToAllShape, CallOptions, RankBuffers, ReduceScatterShape,
                       RmsNormBuffers, RuntimeOptions, TensorBuffers, check, lib)
from .errors import (AbortedError, DeadlineExceededError, InvalidArgumentError, error_for,
                     invalid_argument)
from .tensors import (all_reduce_rank_call, alltoall_rank_call, rank_call, rmsnorm_rank_call,
                      stream_handle, token_counts)

PROTOCOLS = {"auto": 0, "direct": 1, "one_trip": 2, "copy_engine": 3}
# How an AllGather's rows or an all-to-all's head vectors travel (ltx_wire_format): "fp8_e4m3"
# moves bf16 and fp16 rows or head vectors as e4m3 codes with one scale each (a rank's own rows
# or piece stay exact).
WIRES = {"native": 0, "fp8_e4m3": 1}
TRANSPORTS = {"auto": 0, "peer_stores": 1, "copy_engine": 2}
DIRECTIONS = {"seq_to_heads": 0, "heads_to_seq": 1}
REDUCTIONS = {"sum": 1, "max": 2, "min": 3}
# two_shot_min_bytes that never takes the two-shot AllReduce (but in place): LTX_NEVER_TWO_SHOT.
NEVER_TWO_SHOT = (1 << 63) - 1


# The ranges of the C fields the integers go into: ctypes would wrap anything outside them.
INT32_MAX = (1 << 31) - 1
INT64_MAX = (1 << 63) - 1


def _integer(value, what: str, low: int, high: int) -> int:
    """`value` as an int when it is an integer (anything with __index__, such as numpy's, but
    not a bool) in [low, high]; InvalidArgumentError naming `what` otherwise."""
    try:
        number = None if isinstance(value, bool) else operator.index(value)
    except TypeError:
        number = None
    if number is None or not low <= number <= high:
        raise invalid_argument(f"{what} = {value!r} must be an integer in [{low}, {high}]")
    return number


def _counts(values, what: str) -> list:
    """`values` as a list of token or head counts, each an integer in [0, INT64_MAX];
    InvalidArgumentError naming `what` and the entry otherwise."""
    return [_integer(v, f"{what}[{i}]", 0, INT64_MAX) for i, v in enumerate(values)]


def _real(value):
    """`value` as a float when it is a finite real number (numpy's too, not a bool); None
    otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    try:
        number = float(value)
    except OverflowError:  # An int past the floats.
        return None
    return number if math.isfinite(number) else None


def _microseconds(seconds, what: str, positive: bool = False) -> int:
    """A finite duration in seconds >= 0 (> 0 if `positive`, then at least 1 us) as whole
    microseconds; InvalidArgumentError naming `what` otherwise."""
    number = _real(seconds)
    if (number is None or number < 0 or (positive and number == 0)
            or number * 1e6 >= INT64_MAX):
        bound = "> 0" if positive else ">= 0"
        raise invalid_argument(f"{what} = {seconds!r} must be a finite duration in seconds "
                               f"{bound}")
    us = int(round(number * 1e6))
    return max(us, 1) if positive else us


def _check_wait(wait: bool, wait_timeout) -> None:
    """InvalidArgumentError, before anything is launched, for a coordinated call's wait_timeout
    that its wait would refuse after the launch."""
    if wait:
        _microseconds(wait_timeout, "wait_timeout")


def _eps(eps) -> float:
    """`eps` as a float when fp32 holds it as a positive finite value (the C field is a
    float); InvalidArgumentError otherwise."""
    number = _real(eps)
    if number is None or not 0.0 < ctypes.c_float(number).value < math.inf:
        raise invalid_argument(f"eps = {eps!r} must be positive and finite in fp32")
    return number


def enum_value(table: dict, value, what: str) -> int:
    """table[value]; InvalidArgumentError naming `what` and the choices when `value` is not a
    key of `table` (PROTOCOLS, TRANSPORTS, DIRECTIONS, REDUCTIONS)."""
    if not isinstance(value, str) or value not in table:
        raise invalid_argument(f"{what} = {value!r}; expected one of {', '.join(table)}")
    return table[value]


def _optional_count(value, what: str, expected: str) -> int:
    """An int >= 0 as it is, None as -1 (the C API's "not set"); InvalidArgumentError naming
    `what` and `expected` for anything else."""
    if value is None:
        return -1
    try:
        return _integer(value, what, 0, INT64_MAX)
    except ValueError:
        raise invalid_argument(f"{what} = {value!r} must be {expected}") from None


def _call_options(timeout, blocks: int, protocol: str, generation=None,
                  two_shot_min_bytes=None, wire: str = "native") -> CallOptions:
    """The CallOptions of these values, checked and made plain ints first (so that the cache
    below never answers for a value it did not check)."""
    # 0 is the C API's "the Runtime's timeout": a call's own is never 0.
    return _cached_call_options(
        0 if timeout is None else _microseconds(timeout, "timeout", positive=True),
        _integer(blocks, "blocks", 0, INT32_MAX), enum_value(PROTOCOLS, protocol, "protocol"),
        _optional_count(generation, "generation", "a value of Runtime.generation"),
        _optional_count(two_shot_min_bytes, "two_shot_min_bytes",
                        "a byte count >= 0 (None: the Runtime's)"),
        enum_value(WIRES, wire, "wire"))


@functools.lru_cache(maxsize=64)
def _cached_call_options(timeout_us: int, blocks: int, protocol: int, generation: int,
                         two_shot_min_bytes: int, wire: int) -> CallOptions:
    """The CallOptions of checked values (cached: calls repeat them; never modified)."""
    call = CallOptions()
    check(lib().ltx_call_options_init_sized(ctypes.byref(call), ctypes.sizeof(call)))
    call.timeout_us = timeout_us
    call.blocks = blocks
    call.protocol = protocol
    call.generation = generation
    call.two_shot_min_bytes = two_shot_min_bytes
    call.wire = wire
    return call


def _held(*per_rank_lists) -> tuple:
    """Copies of the call's per-rank lists (and of each rank's list of tensors), for an Op to
    keep: a caller that changes its lists afterwards leaves the tensors held."""
    return tuple(tuple(tuple(t) if isinstance(t, (list, tuple)) else t for t in tensors)
                 for tensors in per_rank_lists)


def _first_tensors(per_rank) -> list:
    """Each rank's tensor, or the first of its list (calls of several tensors)."""
    return [t[0] if isinstance(t, (list, tuple)) and t else t for t in per_rank]


def _counted_shape(struct, *tail):
    """shape(key, counts) of a `struct` with token counts (AllGatherShape, AllToAllShape,
    ReduceScatterShape): the fields `key`, the counts and the fields `tail` after them."""
    def shape(key: tuple, counts):
        array = (ctypes.c_int64 * len(counts))(*counts)
        result = struct(*key, array, len(counts), *tail)
        result._arrays = (array, tail)  # Keeps the arrays alive with the struct.
        return result
    return shape


class _Collective:
    """What differs between the collectives: the C functions; `describe(rank, input, output,
    counts, device)`, which checks one rank's tensors and returns (the shape's leading fields,
    input pointer, output pointer); `fields`, the names of those fields; `shape(key, counts)`,
    which builds the shape struct from them; and `several`, whether a rank may pass lists of up
    to MAX_TENSORS tensors (the C functions' _tensors forms). The AllReduce takes no token
    counts: counts is None there."""

    def __init__(self, function: str, describe, fields: str, shape, several: bool = False):
        self.function, self.describe, self.fields = function, describe, fields
        self.shape, self.several = shape, several

    def entry(self, tensors, per_rank: bool):
        """The C function for a call of `tensors` tensors per rank (None: one tensor, not in a
        list) and the arguments between the shape and the buffers."""
        name = self.function if tensors is None else self.function + "_tensors"
        return name + ("_rank" if per_rank else ""), () if tensors is None else (tensors,)

    def rank_buffers(self, rank: int, input, output, counts, device, stream):
        """(shape's leading fields, tensor count or None, C buffers) of rank `rank`: one input
        and one output tensor, or (where `several`) lists or tuples of 1 to MAX_TENSORS tensors
        each, all of one shape."""
        listed = isinstance(input, (list, tuple)), isinstance(output, (list, tuple))
        if not any(listed):
            key, src, dst = self.describe(rank, input, output, counts, device)
            return key, None, RankBuffers(src, dst, stream)
        if not self.several:
            raise invalid_argument(f"{self.function} takes one input and one output tensor "
                                   f"per rank, not lists")
        if not all(listed) or len(input) != len(output) or not 1 <= len(input) <= MAX_TENSORS:
            raise invalid_argument(
                f"rank {rank} passes {len(input) if listed[0] else 'one tensor'} inputs and "
                f"{len(output) if listed[1] else 'one tensor'} outputs; expected lists of 1 to "
                f"{MAX_TENSORS} tensors each, of the same length")
        described = [self.describe(rank, i, o, counts, device) for i, o in zip(input, output)]
        keys = {key for key, _, _ in described}
        if len(keys) != 1:
            raise invalid_argument(
                f"rank {rank}'s tensors disagree on {self.fields}: {sorted(keys)}")
        pad = [None] * (MAX_TENSORS - len(described))
        return keys.pop(), len(described), TensorBuffers(
            tuple(src for _, src, _ in described) + tuple(pad),
            tuple(dst for _, _, dst in described) + tuple(pad), stream)


class Op:
    """The completion of one coordinated call made with wait=False. Call wait(); close() (or
    garbage collection) frees it. It keeps the call's tensors alive until then, so that
    PyTorch's allocator does not hand their memory out while the GPUs may still use it. Must not
    be used after its Runtime is closed."""

    def __init__(self, runtime: "Runtime", handle: ctypes.c_void_p, tensors=()):
        self._runtime = runtime
        self._handle = handle
        self._tensors = tensors

    def wait(self, timeout: float = 30.0) -> None:
        """Blocks until the op finished on every GPU. Raises the device's error, or
        DeadlineExceededError naming the ranks still running after `timeout` seconds."""
        if not self._handle:
            raise invalid_argument("the op is closed")
        check(lib().ltx_op_wait(self._handle, _microseconds(timeout, "timeout")))

    def close(self) -> None:
        # The handle is taken before the library is called (which releases the GIL), so that no
        # other thread closing this op, or its Runtime, destroys it twice.
        handle, self._handle = self._handle, None
        if handle:
            check(lib().ltx_op_destroy(handle))
        self._tensors = ()

    def __del__(self):
        handle, self._handle = getattr(self, "_handle", None), None
        if handle and self._runtime._handle:
            lib().ltx_op_destroy(handle)


class RankCall:
    """One rank's prepared per-rank call (Runtime.prepare_all_gather_rank and the other
    prepare_*_rank methods). Calling it enqueues the call, exactly as the per-rank method
    (all_gather_rank, ...) with the same arguments would, and raises the same errors. Call it
    from the rank's own thread. Must not be used after its Runtime is closed."""

    def __init__(self, runtime: "Runtime", function: str, rank: int, shape, counted: tuple,
                 buffers, options, tensors):
        self._runtime = runtime
        self._tensors = tensors  # The buffers' memory stays allocated while the call lives.
        self._function = getattr(lib(), function)
        self._arguments = (rank, ctypes.byref(shape), *counted, ctypes.byref(buffers),
                           ctypes.byref(options))
        self._keep = (shape, buffers, options)

    def __call__(self) -> None:
        code = self._function(self._runtime._live(), *self._arguments)
        if code:
            check(code)


class Runtime:
    """One process driving the GPUs `devices` (rank order; None: every visible GPU). A GPU may
    host several ranks ([0, 0] is two ranks on GPU 0); each of them then needs a stream of its
    own (torch.cuda.Stream per rank), since stream=None would give them the GPU's one current
    stream.

    timeout: seconds a GPU waits for its peers at a barrier. worker_spin: seconds the host threads
    poll before they sleep. max_blocks, one_trip_max_bytes (-1: set by the world size),
    copy_engine_min_bytes, two_shot_min_bytes (the AllReduce's input bytes per rank from which it
    runs two-shot; 0: always, NEVER_TWO_SHOT: never but in place) and transport ("auto",
    "peer_stores", "copy_engine") are those of ltx::RuntimeOptions. Raises FailedPreconditionError
    without GPUs, InvalidArgumentError for bad options. Use it as a context manager or call
    close()."""

    def __init__(self, devices=None, timeout: float = 10.0, max_blocks: int = 0,
                 worker_spin: float = 100e-6, one_trip_max_bytes: int = -1,
                 copy_engine_min_bytes: int = 32 << 20, transport: str = "auto",
                 two_shot_min_bytes: int = 1 << 20):
        self._handle = None
        self._ops = weakref.WeakSet()
        self._unfinished = []  # Ops whose wait timed out (_finish), with their tensors.
        options = RuntimeOptions()
        check(lib().ltx_runtime_options_init_sized(ctypes.byref(options),
                                                   ctypes.sizeof(options)))
        devices = [_integer(d, f"devices[{i}]", 0, INT32_MAX)
                   for i, d in enumerate(devices or [])]
        device_array = (ctypes.c_int * len(devices))(*devices)
        options.devices = device_array
        options.num_devices = len(devices)
        options.timeout_us = _microseconds(timeout, "timeout")
        # The values themselves are the Runtime's to judge; their ranges are the C fields'.
        options.max_blocks = _integer(max_blocks, "max_blocks", -INT32_MAX - 1, INT32_MAX)
        options.worker_spin_us = _microseconds(worker_spin, "worker_spin")
        options.one_trip_max_bytes = _integer(one_trip_max_bytes, "one_trip_max_bytes",
                                              -INT64_MAX - 1, INT64_MAX)
        options.copy_engine_min_bytes = _integer(copy_engine_min_bytes, "copy_engine_min_bytes",
                                                 -INT64_MAX - 1, INT64_MAX)
        options.transport = enum_value(TRANSPORTS, transport, "transport")
        options.two_shot_min_bytes = _integer(two_shot_min_bytes, "two_shot_min_bytes",
                                              -INT64_MAX - 1, INT64_MAX)
        handle = ctypes.c_void_p()
        check(lib().ltx_runtime_create(ctypes.byref(options), ctypes.byref(handle)))
        self._handle = handle
        size = ctypes.c_int()
        check(lib().ltx_runtime_world_size(handle, ctypes.byref(size)))
        self.devices = []
        for rank in range(size.value):
            device = ctypes.c_int()
            check(lib().ltx_runtime_device(handle, rank, ctypes.byref(device)))
            self.devices.append(device.value)
        code = ctypes.c_int()
        check(lib().ltx_runtime_transport(handle, ctypes.byref(code)))
        self.transport = {v: k for k, v in TRANSPORTS.items()}[code.value]

    @property
    def world_size(self) -> int:
        return len(self.devices)

    @property
    def generation(self) -> int:
        """The reset generation (successful resets so far). A server reads it when a step
        starts and passes it as `generation=` to every call of the step, so that a rank thread
        late for a failed op gets ltx.AbortedError after reset() instead of pairing its call
        with the next op."""
        value = ctypes.c_uint64()
        check(lib().ltx_runtime_generation(self._live(), ctypes.byref(value)))
        return value.value

    def _live(self) -> ctypes.c_void_p:
        if not self._handle:
            raise invalid_argument("the runtime is closed")
        return self._handle

    def all_gather(self, inputs, outputs, counts=None, streams=None, *, dim: int = -2,
                   timeout=None, blocks: int = 0, protocol: str = "auto", wait: bool = True,
                   wait_timeout: float = 30.0, generation=None, wire: str = "native"):
        """Coordinated call: one input and one output tensor per rank, or per rank a list or tuple
        of up to 4 inputs and as many outputs, all of one shape, gathered in one op (Q, K and V; the
        same count on every rank); streams: one per rank, or None for each GPU's current stream.
        counts defaults to the inputs' sizes along `dim`. Returns None after waiting (wait=True),
        else an Op to wait on. timeout, blocks, protocol ("auto", "direct", "one_trip",
        "copy_engine") and generation (a value of Runtime.generation, or None) are ltx::CallOptions:
        a call for an earlier generation raises ltx.AbortedError with nothing launched. wire
        "fp8_e4m3" moves bf16 and fp16 rows of at least 8 elements as e4m3 codes with a scale per
        row (WIRES; one tensor, not in place, the same on every rank)."""
        self._live()
        counts = (token_counts(_first_tensors(inputs), dim) if counts is None
                  else _counts(counts, "counts"))
        return self._coordinated(self._all_gather(dim), inputs, outputs, counts, streams,
                                 _call_options(timeout, blocks, protocol, generation, wire=wire),
                                 wait, wait_timeout)

    def all_gather_rank(self, rank: int, input, output, counts, stream=None, *, dim: int = -2,
                        timeout=None, blocks: int = 0, protocol: str = "auto",
                        generation=None, wire: str = "native") -> None:
        """Per-rank call from rank `rank`'s own thread: enqueues its part on `stream` (None:
        the GPU's current stream) with no host synchronisation, so torch.cuda.graph can capture
        it. Every rank must make the matching call with the same counts. input and output may
        be lists of up to 4 tensors, as in all_gather. For a call repeated
        with the same tensors, prepare_all_gather_rank checks them once."""
        self._call_rank_now(rank, lambda: self.prepare_all_gather_rank(
            rank, input, output, counts, stream, dim=dim, timeout=timeout, blocks=blocks,
            protocol=protocol, generation=generation, wire=wire), generation)

    def prepare_all_gather_rank(self, rank: int, input, output, counts, stream=None, *,
                                dim: int = -2, timeout=None, blocks: int = 0,
                                protocol: str = "auto", generation=None,
                                wire: str = "native") -> "RankCall":
        """Checks the arguments of all_gather_rank once and returns a RankCall that makes the
        call each time it is called, with these tensors, counts and stream: what a server loop
        repeats every step, at the cost of one ctypes call. The RankCall keeps the tensors
        alive; their contents may change between calls."""
        return self._prepare_rank(self._all_gather(dim), rank, input, output, counts, stream,
                                  _call_options(timeout, blocks, protocol, generation,
                                                wire=wire))

    def all_to_all(self, inputs, outputs, counts=None, streams=None, *,
                   direction: str = "seq_to_heads", head_counts=None, timeout=None,
                   blocks: int = 0, protocol: str = "auto", wait: bool = True,
                   wait_timeout: float = 30.0, generation=None, wire: str = "native"):
        """Coordinated Ulysses all-to-all over P ranks. direction "seq_to_heads": rank r's
        input [batch, counts[r], heads, head_dim] -> every rank r's output
        [batch, sum(counts), H_r, head_dim] (heads [H_0 + ... + H_{r-1}, + H_r) of the whole
        sequence, rank s's tokens after those of ranks < s); "heads_to_seq" is the exact
        inverse. H_r is head_counts[r]: one count >= 0 per rank, summing to heads (a rank may
        hold none); None is the even split, heads / P each. counts defaults to the token sizes
        (dimension 1) of the sequence-sharded tensors (inputs, or outputs for heads_to_seq). Lists
        of up to 4 tensors per rank move in one op, as for all_gather (also in the per-rank forms).
        Streams, the options and the result are those of all_gather; protocol "auto", "direct",
        "one_trip" or "copy_engine" ("auto" takes the copy engines for an eager call whose largest
        piece reaches copy_engine_min_bytes where no GPU hosts two ranks, as for all_gather, and the
        kernels otherwise; every protocol takes them on the copy-engine transport). wire
        "fp8_e4m3" moves each head vector a rank sends to a peer as e4m3 codes with a scale
        (WIRES; bf16 and fp16, head_dim >= 8, at most 256 heads per rank, the same on every
        rank), decoded by the receiver; a rank's own piece stays exact."""
        self._live()
        collective = self._all_to_all(direction, head_counts)
        if counts is None:
            counts = token_counts(
                _first_tensors(inputs if direction == "seq_to_heads" else outputs), 1)
        counts = _counts(counts, "counts")
        return self._coordinated(collective, inputs, outputs, counts, streams,
                                 _call_options(timeout, blocks, protocol, generation, wire=wire),
                                 wait, wait_timeout)

    def all_to_all_rank(self, rank: int, input, output, counts, stream=None, *,
                        direction: str = "seq_to_heads", head_counts=None, timeout=None,
                        blocks: int = 0, protocol: str = "auto", generation=None,
                        wire: str = "native") -> None:
        """Per-rank all-to-all from rank `rank`'s own thread (shapes and head_counts as
        all_to_all, the same on every rank; the per-rank contract of all_gather_rank)."""
        self._call_rank_now(rank, lambda: self.prepare_all_to_all_rank(
            rank, input, output, counts, stream, direction=direction, head_counts=head_counts,
            timeout=timeout, blocks=blocks, protocol=protocol, generation=generation,
            wire=wire), generation)

    def prepare_all_to_all_rank(self, rank: int, input, output, counts, stream=None, *,
                                direction: str = "seq_to_heads", head_counts=None,
                                timeout=None, blocks: int = 0, protocol: str = "auto",
                                generation=None, wire: str = "native") -> "RankCall":
        """Checks the arguments of all_to_all_rank once and returns a RankCall that makes the
        call (as prepare_all_gather_rank)."""
        return self._prepare_rank(self._all_to_all(direction, head_counts), rank, input, output,
                                  counts, stream,
                                  _call_options(timeout, blocks, protocol, generation,
                                                wire=wire))

    def all_reduce(self, inputs, outputs, reduction: str = "sum", streams=None, *,
                   timeout=None, blocks: int = 0, protocol: str = "auto", wait: bool = True,
                   wait_timeout: float = 30.0, generation=None, two_shot_min_bytes=None):
        """Coordinated AllReduce: one input and one output tensor per rank, all of one shape
        and dtype (bfloat16, float16 or float32); every output becomes the element-wise
        `reduction` ("sum", "max", "min") of every rank's input, combined in rank order in
        fp32 and rounded once, so that every rank gets the same bits. In place where each
        rank's output is its input (on every rank or none: below the two-shot size a call in
        place on some ranks only is InvalidArgumentError, nothing launched). two_shot_min_bytes
        overrides the Runtime's for this call (0: two-shot, NEVER_TWO_SHOT: one-shot but in
        place; None: the Runtime's; the same on every rank). Streams, the options and the result
        are those of all_gather; protocol "auto" or "direct"."""
        self._live()
        return self._coordinated(
            self._all_reduce(reduction), inputs, outputs, None, streams,
            _call_options(timeout, blocks, protocol, generation, two_shot_min_bytes), wait,
            wait_timeout)

    def all_reduce_rank(self, rank: int, input, output, reduction: str = "sum", stream=None, *,
                        timeout=None, blocks: int = 0, protocol: str = "auto",
                        generation=None, two_shot_min_bytes=None) -> None:
        """Per-rank AllReduce from rank `rank`'s own thread (tensors, reduction and
        two_shot_min_bytes as all_reduce, the same on every rank; the per-rank contract of
        all_gather_rank)."""
        self._call_rank_now(rank, lambda: self.prepare_all_reduce_rank(
            rank, input, output, reduction, stream, timeout=timeout, blocks=blocks,
            protocol=protocol, generation=generation,
            two_shot_min_bytes=two_shot_min_bytes), generation)

    def prepare_all_reduce_rank(self, rank: int, input, output, reduction: str = "sum",
                                stream=None, *, timeout=None, blocks: int = 0,
                                protocol: str = "auto", generation=None,
                                two_shot_min_bytes=None) -> "RankCall":
        """Checks the arguments of all_reduce_rank once and returns a RankCall that makes the
        call (as prepare_all_gather_rank)."""
        return self._prepare_rank(
            self._all_reduce(reduction), rank, input, output, None, stream,
            _call_options(timeout, blocks, protocol, generation, two_shot_min_bytes))

    def reduce_scatter(self, inputs, outputs, counts=None, streams=None, *,
                       reduction: str = "sum", dim: int = -2, timeout=None, blocks: int = 0,
                       protocol: str = "auto", wait: bool = True, wait_timeout: float = 30.0,
                       generation=None):
        """Coordinated ReduceScatter, the AllGather's layout reversed: every rank's input has
        sum(counts) tokens along `dim` ([batch, sum(counts), hidden] by default), rank r's
        output counts[r] tokens, the element-wise `reduction` over every rank's input of the
        tokens [counts[0] + ... + counts[r-1], + counts[r]). counts defaults to the outputs'
        sizes along `dim`. Dtypes, reductions and the rank order are those of all_reduce; no
        in-place form. Streams, the options and the result are those of all_gather."""
        self._live()
        counts = token_counts(outputs, dim) if counts is None else _counts(counts, "counts")
        return self._coordinated(self._reduce_scatter(reduction, dim), inputs, outputs, counts,
                                 streams, _call_options(timeout, blocks, protocol, generation),
                                 wait, wait_timeout)

    def reduce_scatter_rank(self, rank: int, input, output, counts, stream=None, *,
                            reduction: str = "sum", dim: int = -2, timeout=None,
                            blocks: int = 0, protocol: str = "auto",
                            generation=None) -> None:
        """Per-rank ReduceScatter from rank `rank`'s own thread (shapes and reduction as
        reduce_scatter, the same on every rank; the per-rank contract of all_gather_rank)."""
        self._call_rank_now(rank, lambda: self.prepare_reduce_scatter_rank(
            rank, input, output, counts, stream, reduction=reduction, dim=dim, timeout=timeout,
            blocks=blocks, protocol=protocol, generation=generation), generation)

    def prepare_reduce_scatter_rank(self, rank: int, input, output, counts, stream=None, *,
                                    reduction: str = "sum", dim: int = -2, timeout=None,
                                    blocks: int = 0, protocol: str = "auto",
                                    generation=None) -> "RankCall":
        """Checks the arguments of reduce_scatter_rank once and returns a RankCall that makes
        the call (as prepare_all_gather_rank)."""
        return self._prepare_rank(self._reduce_scatter(reduction, dim), rank, input, output,
                                  counts, stream,
                                  _call_options(timeout, blocks, protocol, generation))

    def all_reduce_rmsnorm(self, inputs, outputs, residuals, weights, residual_outs=None,
                           streams=None, *, eps: float = 1e-6, timeout=None, blocks: int = 0,
                           wait: bool = True, wait_timeout: float = 30.0, generation=None):
        """Coordinated AllReduce with the fused residual-add + RMSNorm epilogue of a decoder
        layer. Per rank: an input, output, residual and residual_out of one shape [..., hidden]
        and a weight of hidden elements, all of one dtype (bfloat16, float16 or float32). Every
        rank sums the inputs as all_reduce does, then, per row of hidden elements, stores
        residual_out = sum + residual and output = residual_out / sqrt(mean(residual_out^2) +
        eps) * weight, in fp32 in one fixed order: the same bits on every rank and every run.
        residual_outs None: every rank's residual is updated in place. The input may not be the
        output. Streams, the options and the result are those of all_gather (one-shot, the
        "direct" protocol)."""
        handle = self._live()
        _check_wait(wait, wait_timeout)
        n = self.world_size
        residual_outs = residuals if residual_outs is None else residual_outs
        streams = [None] * n if streams is None else list(streams)
        lists = [("inputs", inputs), ("outputs", outputs), ("residuals", residuals),
                 ("residual_outs", residual_outs), ("weights", weights), ("streams", streams)]
        if any(len(tensors) != n for _, tensors in lists):
            listed = [f"{len(tensors)} {name}" for name, tensors in lists]
            raise invalid_argument(f"{', '.join(listed[:-1])} and {listed[-1]} for {n} ranks")
        described = [self._rmsnorm_rank(rank, inputs[rank], outputs[rank], residuals[rank],
                                        residual_outs[rank], weights[rank], streams[rank])
                     for rank in range(n)]
        keys = {key for key, _ in described}
        if len(keys) != 1:
            raise invalid_argument(f"ranks disagree on (dtype, rows, hidden): {sorted(keys)}")
        shape = AllReduceRmsNormShape(*keys.pop(), _eps(eps))
        buffers = (RmsNormBuffers * n)(*(b for _, b in described))
        call = _call_options(timeout, blocks, "auto", generation)
        op = ctypes.c_void_p()
        check(lib().ltx_all_reduce_rmsnorm(handle, ctypes.byref(shape), buffers, n,
                                           ctypes.byref(call), ctypes.byref(op)))
        return self._finish(op, wait, wait_timeout,
                            _held(inputs, outputs, residuals, residual_outs, weights))

    def all_reduce_rmsnorm_rank(self, rank: int, input, output, residual, weight,
                                residual_out=None, stream=None, *, eps: float = 1e-6,
                                timeout=None, blocks: int = 0, generation=None) -> None:
        """Per-rank AllReduce with the fused RMSNorm epilogue from rank `rank`'s own thread
        (tensors and eps as all_reduce_rmsnorm, the same shape and eps on every rank;
        residual_out None: the residual is updated in place; the per-rank contract of
        all_gather_rank)."""
        self._call_rank_now(rank, lambda: self.prepare_all_reduce_rmsnorm_rank(
            rank, input, output, residual, weight, residual_out, stream, eps=eps,
            timeout=timeout, blocks=blocks, generation=generation), generation)

    def prepare_all_reduce_rmsnorm_rank(self, rank: int, input, output, residual, weight,
                                        residual_out=None, stream=None, *, eps: float = 1e-6,
                                        timeout=None, blocks: int = 0,
                                        generation=None) -> "RankCall":
        """Checks the arguments of all_reduce_rmsnorm_rank once and returns a RankCall that
        makes the call (as prepare_all_gather_rank)."""
        self._live()
        rank = _integer(rank, "rank", 0, self.world_size - 1)
        residual_out = residual if residual_out is None else residual_out
        key, buffers = self._rmsnorm_rank(rank, input, output, residual, residual_out, weight,
                                          stream)
        return RankCall(self, "ltx_all_reduce_rmsnorm_rank", rank,
                        AllReduceRmsNormShape(*key, _eps(eps)), (), buffers,
                        _call_options(timeout, blocks, "auto", generation),
                        (input, output, residual, residual_out, weight))

    def _rmsnorm_rank(self, rank: int, input, output, residual, residual_out, weight,
                      stream) -> tuple:
        """((dtype, rows, hidden), RmsNormBuffers) of rank `rank`, its tensors checked."""
        device = self.devices[rank]
        key, pointers = rmsnorm_rank_call(rank, input, output, residual, residual_out, weight,
                                          device)
        return key, RmsNormBuffers(*pointers, stream_handle(stream, device))

    def _all_gather(self, dim: int) -> _Collective:
        def describe(rank, input, output, counts, device):
            return rank_call(rank, input, output, counts, dim, device)
        return _Collective("ltx_all_gather", describe, "(dtype, batch, hidden)",
                           _counted_shape(AllGatherShape), several=True)

    def _all_to_all(self, direction: str, head_counts) -> _Collective:
        code = enum_value(DIRECTIONS, direction, "direction")
        split = None if head_counts is None else _counts(head_counts, "head_counts")
        if split is not None and len(split) != self.world_size:
            raise invalid_argument(
                f"head_counts has {len(split)} entries for {self.world_size} ranks")
        array = None if split is None else (ctypes.c_int64 * len(split))(*split)

        def describe(rank, input, output, counts, device):
            return alltoall_rank_call(rank, input, output, counts, self.world_size, code == 0,
                                      device, split)
        return _Collective("ltx_all_to_all", describe, "(dtype, batch, heads, head_dim)",
                           _counted_shape(AllToAllShape, code, array), several=True)

    @staticmethod
    def _all_reduce(reduction: str) -> _Collective:
        code = enum_value(REDUCTIONS, reduction, "reduction")

        def describe(rank, input, output, counts, device):
            return all_reduce_rank_call(rank, input, output, device)
        return _Collective("ltx_all_reduce", describe, "(dtype, count)",
                           lambda key, counts: AllReduceShape(*key, code))

    @staticmethod
    def _reduce_scatter(reduction: str, dim: int) -> _Collective:
        code = enum_value(REDUCTIONS, reduction, "reduction")

        def describe(rank, input, output, counts, device):
            return rank_call(rank, input, output, counts, dim, device, scatter=True)
        return _Collective("ltx_reduce_scatter", describe, "(dtype, batch, hidden)",
                           _counted_shape(ReduceScatterShape, code))

    def _coordinated(self, collective: _Collective, inputs, outputs, counts, streams,
                     call: CallOptions, wait: bool, wait_timeout: float):
        """The coordinated call of `collective`: checks every rank, calls, and waits (wait).
        counts is None for a collective without token counts."""
        handle = self._live()
        _check_wait(wait, wait_timeout)
        n = self.world_size
        streams = [None] * n if streams is None else list(streams)
        sizes = [(len(inputs), "inputs"), (len(outputs), "outputs"), (len(streams), "streams")]
        if counts is not None:
            sizes.append((len(counts), "counts"))
        if any(size != n for size, _ in sizes):
            listed = [f"{size} {what}" for size, what in sizes]
            raise invalid_argument(
                f"{', '.join(listed[:-1])} and {listed[-1]} for {n} ranks")
        described = [collective.rank_buffers(rank, inputs[rank], outputs[rank], counts,
                                             self.devices[rank],
                                             stream_handle(streams[rank], self.devices[rank]))
                     for rank in range(n)]
        keys = {key for key, _, _ in described}
        if len(keys) != 1:
            raise invalid_argument(f"ranks disagree on {collective.fields}: {sorted(keys)}")
        tensors = {count for _, count, _ in described}
        if len(tensors) != 1:
            raise invalid_argument("ranks disagree on their tensors: pass one tensor per rank, "
                                   "or lists of the same length on every rank")
        function, counted = collective.entry(tensors.pop(), per_rank=False)
        buffers = (type(described[0][2]) * n)(*(b for _, _, b in described))
        shape = collective.shape(keys.pop(), counts)
        op = ctypes.c_void_p()
        check(getattr(lib(), function)(handle, ctypes.byref(shape), *counted, buffers, n,
                                       ctypes.byref(call), ctypes.byref(op)))
        return self._finish(op, wait, wait_timeout, _held(inputs, outputs))

    def _finish(self, op: ctypes.c_void_p, wait: bool, wait_timeout: float, tensors):
        """The end of a coordinated call that made `op` on `tensors`: its Op (which keeps
        them alive), or with `wait` None once it finished (then freed). A wait that times out
        raises DeadlineExceededError with the Op as its .op, kept until synchronize(),
        reset() or close()."""
        result = Op(self, op, tensors)
        self._ops.add(result)
        if not wait:
            return result
        try:
            result.wait(wait_timeout)
        except DeadlineExceededError as error:
            # The op may still run on the GPUs, in the call's tensors: it keeps them until it is
            # waited for again (error.op) or the Runtime synchronises, resets or closes.
            error.op = result
            self._unfinished.append(result)
            raise
        except BaseException:
            result.close()
            raise
        result.close()
        return None

    def _prepare_rank(self, collective: _Collective, rank: int, input, output, counts, stream,
                      call: CallOptions) -> "RankCall":
        """The RankCall of `collective` for rank `rank`, after checking its arguments (counts
        is None for a collective without token counts)."""
        self._live()
        rank = _integer(rank, "rank", 0, self.world_size - 1)
        counts = None if counts is None else _counts(counts, "counts")
        if counts is not None and len(counts) != self.world_size:
            raise invalid_argument(f"{len(counts)} counts for {self.world_size} ranks")
        device = self.devices[rank]
        key, tensors, buffers = collective.rank_buffers(rank, input, output, counts, device,
                                                        stream_handle(stream, device))
        function, counted = collective.entry(tensors, per_rank=True)
        return RankCall(self, function, rank, collective.shape(key, counts), counted, buffers,
                        call, _held((input, output))[0])

    def _call_rank_now(self, rank, prepare, generation=None) -> None:
        """Makes rank `rank`'s per-rank call that `prepare` (a prepare_*_rank with its arguments,
        `generation` among them) returns. The peers of a rank whose call is refused wait for it
        in their op, and this rank's next call would pair with theirs: an argument refused here
        stops the Runtime (ltx_runtime_stop), as the library stops it for a per-rank call it
        refuses; calls raise FailedPreconditionError until reset(). A rank that is none of the
        Runtime's names no op's caller, and is refused without stopping it, as in the library;
        so is a call of an older reset generation (AbortedError: it belongs to no op of this
        one)."""
        _integer(rank, "rank", 0, self.world_size - 1)
        try:
            call = prepare()
        except InvalidArgumentError as error:
            prefix = "INVALID_ARGUMENT: "
            text = error.message[len(prefix):] if error.message.startswith(prefix) \
                else error.message
            self._refuse(rank, generation, error.code, text, error)
            raise
        except Exception as error:  # A TypeError of an argument, say: refused all the same.
            self._refuse(rank, generation, InvalidArgumentError.code,
                         f"rank {rank}: {type(error).__name__}: {error}", error)
            raise
        call()

    def _refuse(self, rank: int, generation, code: int, message: str, error) -> None:
        """Stops the Runtime (ltx_runtime_stop) for rank `rank`'s refused call of `generation`
        with `code` and `message`, unless closed; for a call of an older reset generation
        raises AbortedError (from `error`) instead, worded as the library's."""
        if not self._handle:
            return
        current = self.generation
        if isinstance(generation, numbers.Integral) and not isinstance(generation, bool) \
                and 0 <= generation < current:
            raise error_for(AbortedError.code, (
                f"ABORTED: rank {rank}: call issued for reset generation {generation}, but the "
                f"Runtime was Reset since (now {current}); dropped, nothing was launched")) \
                from error
        check(lib().ltx_runtime_stop(self._handle, code, message.encode()))

    def synchronize(self, timeout: float = 30.0) -> None:
        """Waits for every rank's last op made through this Runtime; raises its error."""
        check(lib().ltx_runtime_synchronize(self._live(), _microseconds(timeout, "timeout")))
        self._release_unfinished()

    def status(self) -> None:
        """Raises the error that stopped the Runtime, if any."""
        check(lib().ltx_runtime_status(self._live()))

    def reset(self, timeout: float = 30.0) -> None:
        """Makes the Runtime usable after an error (synchronise graph replays first)."""
        check(lib().ltx_runtime_reset(self._live(), _microseconds(timeout, "timeout")))
        self._release_unfinished()

    def _release_unfinished(self) -> None:
        """Frees the Ops whose wait timed out, now that no op of this Runtime runs."""
        unfinished, self._unfinished = self._unfinished, []
        for op in unfinished:
            op.close()

    def close(self) -> None:
        """Frees the Runtime (its open ops first). Later calls raise InvalidArgumentError."""
        if self._handle:
            # The ops' tensors (held here) outlive ltx_runtime_destroy, which waits (bounded)
            # for the kernels that may still use them.
            held = [op._tensors for op in self._ops], self._unfinished  # noqa: F841
            for op in list(self._ops):
                op.close()
            self._unfinished = []
            handle, self._handle = self._handle, None
            check(lib().ltx_runtime_destroy(handle))

    def __enter__(self) -> "Runtime":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        if getattr(self, "_handle", None):
            self.close()


def version() -> int:
    """LTX_VERSION_CODE of the loaded library: major * 10000 + minor * 100 + patch."""
    return lib().ltx_version()


def library_path() -> str:
    """The libltx.so this package loads (see ltx._library)."""
    return _library.library_path()
