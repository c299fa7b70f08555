"""GPU tests of the AllReduce and the ReduceScatter of the Python package ltx with PyTorch (plain
unittest, no pytest):

    PYTHONPATH=<prefix>/lib/python python3 tests/python/reduce_gpu_test.py

It runs as gpu_test.py does: without arguments, once per allocator mode in a child process
each, with one line per mode and gpu_test's exit statuses (77: skipped, 1 under
LTX_REQUIRE_RUN=1); with --child, in this process. The ranks are those of the rank layout
(LTX_TEST_DEVICES, e.g. 0,0,0,0 for four ranks on GPU 0, LTX_TEST_RANKS, else every visible
GPU), at least two, each with its own stream.

Every case draws random inputs (magnitudes in [0.5, 4) of either sign: no zeros, whose sign
torch.maximum and ltx may pick differently, and no NaNs), poisons the outputs before every
call, and compares every rank's output bit for bit with the reference torch computes in ltx's
order: rank 0's input in fp32, combined with rank 1's, then rank 2's, ..., rounded once to the
dtype. The AllReduce also runs forced one-shot (two_shot_min_bytes=ltx.NEVER_TWO_SHOT) and
forced two-shot (0) on the same inputs, whose outputs must be bitwise equal to each other and to
that reference. Without a GPU (or torch) the tests are skipped, and say why.
"""

import math
import sys

import ltx

import gpu_test  # Its rank layout, allocator modes and helpers.
from gpu_test import POISON, run_ranks, synchronize, torch

# The torch dtypes of ltx.REDUCE_DTYPES ("torch.bfloat16", ...).
REDUCE_DTYPES = ([getattr(torch, name.split(".")[1]) for name in ltx.REDUCE_DTYPES]
                 if torch is not None else [])


def random_values(shape, dtype, generator):
    """Random values of `dtype` on the CPU, magnitudes in [0.5, 4) of either sign."""
    magnitude = torch.rand(shape, generator=generator) * 3.5 + 0.5
    sign = torch.randint(0, 2, shape, generator=generator) * 2 - 1
    return (magnitude * sign).to(dtype)


def reference(inputs, reduction: str, dtype):
    """The `reduction` of the CPU tensors `inputs` (one per rank) in ltx's order: rank 0's
    values in fp32, combined with each next rank's in turn, rounded once to `dtype`."""
    combine = {"sum": torch.add, "max": torch.maximum, "min": torch.minimum}[reduction]
    acc = inputs[0].float()
    for values in inputs[1:]:
        acc = combine(acc, values.float())
    return acc.to(dtype)


def placed(shape, dtype, device: int, offset: int):
    """An uninitialised tensor of `shape` on cuda:`device` that starts `offset` elements into
    a buffer of its own (offset 1 misaligns it from the allocator's 16 bytes and more)."""
    buffer = torch.empty(math.prod(shape) + offset, dtype=dtype, device=f"cuda:{device}")
    return buffer[offset:].view(shape)


def as_bytes(tensor):
    return tensor.cpu().contiguous().view(torch.uint8)


class ReduceCase:
    """One reduction over the ranks on `devices`, each rank's input of `shape`: an AllReduce
    when `counts` is None (every output of `shape`, or the input itself with `in_place`), else
    a ReduceScatter of [batch, sum(counts), hidden] inputs into [batch, counts[r], hidden]
    outputs. Every tensor starts `offset` elements into a buffer of its own; one stream per
    rank. The inputs are random and the outputs poisoned from the start (refill)."""

    def __init__(self, devices, shape, dtype, reduction, counts=None, in_place=False, offset=0,
                 seed=0):
        self.devices, self.dtype, self.reduction = devices, dtype, reduction
        self.counts, self.in_place = counts, in_place
        shape = tuple(shape)
        self.inputs = [placed(shape, dtype, d, offset) for d in devices]
        if in_place:
            self.outputs = self.inputs
        else:
            out_shapes = ([shape] * len(devices) if counts is None else
                          [shape[:-2] + (c, shape[-1]) for c in counts])
            self.outputs = [placed(s, dtype, d, offset) for s, d in zip(out_shapes, devices)]
        self.streams = gpu_test.rank_streams(devices)
        self.refill(seed)

    def refill(self, seed):
        """New random inputs (same buffers) and their expected outputs; poisons the outputs
        (unless in place) and waits until both are written."""
        generator = torch.Generator().manual_seed(seed)
        host = [random_values(self.inputs[0].shape, self.dtype, generator) for _ in self.devices]
        for tensor, values in zip(self.inputs, host):
            tensor.copy_(values)
        full = reference(host, self.reduction, self.dtype)
        if self.counts is None:
            self.expected = [as_bytes(full)] * len(self.devices)
        else:
            starts = [sum(self.counts[:r]) for r in range(len(self.counts))]
            self.expected = [as_bytes(full[..., s:s + c, :]) for s, c in zip(starts, self.counts)]
        if not self.in_place:
            for output in self.outputs:
                output.view(torch.uint8).fill_(POISON)
        synchronize(self.devices)

    def check(self, test, what: str):
        synchronize(self.devices)
        for r, output in enumerate(self.outputs):
            got = as_bytes(output)
            if not torch.equal(got, self.expected[r]):
                test.fail(f"{what}: rank {r}'s output differs from torch's {self.reduction} in "
                          f"rank order in {int((got != self.expected[r]).sum())} bytes (dtype "
                          f"{self.dtype}, counts {self.counts}, in place {self.in_place})")

    def prepare_rank(self, runtime, rank: int, **options):
        """Rank `rank`'s prepared per-rank call of this case, on its stream, with the call
        options `options` (e.g. two_shot_min_bytes for an AllReduce)."""
        if self.counts is None:
            return runtime.prepare_all_reduce_rank(rank, self.inputs[rank], self.outputs[rank],
                                                   self.reduction, self.streams[rank], **options)
        return runtime.prepare_reduce_scatter_rank(rank, self.inputs[rank], self.outputs[rank],
                                                   self.counts, self.streams[rank],
                                                   reduction=self.reduction, **options)


class ReduceTest(gpu_test.RuntimeTestCase):
    def case(self, shape, dtype=None, reduction="sum", **options):
        return ReduceCase(self.devices, shape, dtype or torch.bfloat16, reduction, **options)

    def test_all_reduce_every_dtype_reduction_and_count(self):
        for dtype in REDUCE_DTYPES:
            for reduction in ltx.REDUCTIONS:
                for count in (1, 7, 4099, 100003):
                    with self.subTest(dtype=str(dtype), reduction=reduction, count=count):
                        case = self.case((count,), dtype, reduction, seed=count)
                        self.runtime.all_reduce(case.inputs, case.outputs, reduction,
                                                streams=case.streams)
                        case.check(self, "coordinated AllReduce")

    def test_all_reduce_in_place_and_misaligned(self):
        for in_place in (False, True):
            for offset in (0, 1):
                for dtype, reduction in ((torch.bfloat16, "sum"), (torch.float32, "max")):
                    with self.subTest(in_place=in_place, offset=offset, dtype=str(dtype)):
                        case = self.case((3, 3337), dtype, reduction, in_place=in_place,
                                         offset=offset, seed=offset)
                        self.runtime.all_reduce(case.inputs, case.outputs, reduction,
                                                streams=case.streams)
                        case.check(self, "coordinated AllReduce")
                        case.refill(1 + offset)
                        run_ranks(self.n, lambda r: self.runtime.all_reduce_rank(
                            r, case.inputs[r], case.outputs[r], reduction, case.streams[r]))
                        case.check(self, "per-rank AllReduce")

    def test_all_reduce_one_shot_and_two_shot_agree(self):
        paths = (("one-shot", ltx.NEVER_TWO_SHOT), ("two-shot", 0))
        for dtype in REDUCE_DTYPES:
            for count, offset in ((1, 0), (4099, 1), (300007, 0)):
                with self.subTest(dtype=str(dtype), count=count, offset=offset):
                    # One case per path, refilled alike before each call style: same inputs.
                    cases = [self.case((count,), dtype, offset=offset) for _ in paths]
                    prepared = [[case.prepare_rank(self.runtime, r, two_shot_min_bytes=threshold)
                                 for r in range(self.n)]
                                for case, (_, threshold) in zip(cases, paths)]
                    for step, style in enumerate(("coordinated", "per-rank", "prepared")):
                        for case, (path, threshold), calls in zip(cases, paths, prepared):
                            case.refill(count + step)
                            if style == "coordinated":
                                self.runtime.all_reduce(case.inputs, case.outputs,
                                                        streams=case.streams,
                                                        two_shot_min_bytes=threshold)
                            elif style == "per-rank":
                                run_ranks(self.n, lambda r: self.runtime.all_reduce_rank(
                                    r, case.inputs[r], case.outputs[r], "sum", case.streams[r],
                                    two_shot_min_bytes=threshold))
                            else:
                                run_ranks(self.n, lambda r: calls[r]())
                            case.check(self, f"{style} {path} AllReduce")
                        for r in range(self.n):
                            self.assertTrue(
                                torch.equal(as_bytes(cases[0].outputs[r]),
                                            as_bytes(cases[1].outputs[r])),
                                f"{style}: rank {r}'s one-shot and two-shot outputs differ")

    def test_prepared_rank_calls_repeat_with_new_data(self):
        for counts in (None, [5 + 2 * r for r in range(self.n)]):
            with self.subTest(counts=counts):
                shape = (2, sum(counts), 96) if counts else (2, 1000, 96)
                case = self.case(shape, torch.float16, "min", counts=counts)
                calls = [case.prepare_rank(self.runtime, r) for r in range(self.n)]
                for step in range(4):
                    case.refill(100 + step)
                    run_ranks(self.n, lambda r: calls[r]())
                    case.check(self, f"prepared call, step {step}")

    def test_reduce_scatter_every_dtype_reduction_and_counts(self):
        for dtype in REDUCE_DTYPES:
            for reduction in ltx.REDUCTIONS:
                for counts in gpu_test.count_patterns(self.n):
                    with self.subTest(dtype=str(dtype), reduction=reduction, counts=counts):
                        case = self.case((3, sum(counts), 33), dtype, reduction, counts=counts,
                                         seed=sum(counts))
                        # The counts come from the outputs.
                        self.runtime.reduce_scatter(case.inputs, case.outputs,
                                                    streams=case.streams, reduction=reduction)
                        case.check(self, "coordinated ReduceScatter")
                        case.refill(7 + sum(counts))
                        run_ranks(self.n, lambda r: self.runtime.reduce_scatter_rank(
                            r, case.inputs[r], case.outputs[r], counts, case.streams[r],
                            reduction=reduction))
                        case.check(self, "per-rank ReduceScatter")

    def test_reduce_scatter_misaligned_and_large_rows(self):
        for offset, hidden in ((1, 4097), (0, 8192)):
            with self.subTest(offset=offset, hidden=hidden):
                counts = [0] + [3 + r for r in range(1, self.n)]
                case = self.case((1, sum(counts), hidden), torch.bfloat16, "max", counts=counts,
                                 offset=offset, seed=hidden)
                self.runtime.reduce_scatter(case.inputs, case.outputs, counts,
                                            streams=case.streams, reduction="max")
                case.check(self, "coordinated ReduceScatter")

    def test_graph_capture_and_replay(self):
        scatter_counts = [3 + 2 * r for r in range(self.n)]
        for counts, in_place in ((None, False), (None, True), (scatter_counts, False)):
            with self.subTest(counts=counts, in_place=in_place):
                shape = (1, sum(counts), 1024) if counts else (4 * 4096 + 1,)
                case = self.case(shape, counts=counts, in_place=in_place, seed=3)
                graphs = gpu_test.capture_ranks(
                    self.devices, case.streams, lambda r: case.prepare_rank(self.runtime, r)())
                for step in range(4):
                    case.refill(200 + step)
                    gpu_test.replay_ranks(self.devices, case.streams, graphs)
                    case.check(self, f"graph replay {step}")

    def test_torch_ops(self):
        try:
            from ltx import torch_ops
        except ImportError as e:
            self.skipTest(f"needs torch 2.4 or later ({e})")
        handle = torch_ops.register_runtime(self.runtime)
        counts = [4 + r for r in range(self.n)]
        for counts_or_none in (None, counts):
            with self.subTest(counts=counts_or_none):
                shape = (2, sum(counts), 64) if counts_or_none else (5, 77)
                case = self.case(shape, torch.float32, "sum", counts=counts_or_none, seed=9)
                for r, device in enumerate(self.devices):  # One thread issues every rank.
                    with torch.cuda.device(device), torch.cuda.stream(case.streams[r]):
                        case.outputs[r] = (
                            torch.ops.ltx.all_reduce(case.inputs[r], handle, r, "sum")
                            if counts_or_none is None else
                            torch.ops.ltx.reduce_scatter(case.inputs[r], handle, r, counts,
                                                         "sum"))
                case.check(self, "torch.ops.ltx")
        # The epilogue's op: every rank's outputs the same bits as the method's on rank 0.
        case = self.case((4, 96), torch.bfloat16, seed=11)
        residual = random_values((4, 96), torch.bfloat16, torch.Generator().manual_seed(3))
        weight = random_values((96,), torch.bfloat16, torch.Generator().manual_seed(4))
        results = []
        for r, device in enumerate(self.devices):
            with torch.cuda.device(device), torch.cuda.stream(case.streams[r]):
                results.append(torch.ops.ltx.all_reduce_rmsnorm(
                    case.inputs[r], residual.to(f"cuda:{device}"),
                    weight.to(f"cuda:{device}"), handle, r, 1e-5))
        normed = [torch.empty_like(x) for x in case.inputs]
        updated = [residual.to(f"cuda:{d}") for d in self.devices]  # Updated in place.
        weights = [weight.to(f"cuda:{d}") for d in self.devices]
        synchronize(self.devices)
        run_ranks(self.n, lambda r: self.runtime.all_reduce_rmsnorm_rank(
            r, case.inputs[r], normed[r], updated[r], weights[r], None, case.streams[r],
            eps=1e-5))
        self.runtime.synchronize()
        for r, (out, residual_out) in enumerate(results):
            self.assertTrue(torch.equal(as_bytes(out), as_bytes(normed[0])), f"rank {r} output")
            self.assertTrue(torch.equal(as_bytes(residual_out), as_bytes(updated[0])),
                            f"rank {r} residual_out")

    def test_all_reduce_rmsnorm(self):
        """The fused epilogue in both call styles, the residual apart and in place: every
        rank's residual_out is bitwise torch's (sum in rank order, rounded, plus the residual,
        rounded), every rank's output the same bits as rank 0's and close to the RMSNorm torch
        computes in float64 from residual_out (two roundings to the dtype; fp32 a little more)."""
        for dtype in REDUCE_DTYPES:
            for rows, hidden in ((1, 4096), (5, 100), (3, 31)):
                for in_place in (False, True):
                    for per_rank in (False, True):
                        with self.subTest(dtype=str(dtype), rows=rows, hidden=hidden,
                                          in_place=in_place, per_rank=per_rank):
                            self.check_rmsnorm(dtype, rows, hidden, in_place, per_rank)

    def check_rmsnorm(self, dtype, rows, hidden, in_place, per_rank):
        case = self.case((rows, hidden), dtype, seed=rows * hidden)
        generator = torch.Generator().manual_seed(hidden)
        residual_host = random_values((rows, hidden), dtype, generator)
        weight_host = random_values((hidden,), dtype, generator)
        residuals = [residual_host.to(f"cuda:{d}") for d in self.devices]
        weights = [weight_host.to(f"cuda:{d}") for d in self.devices]
        residual_outs = (residuals if in_place else
                         [torch.empty_like(r) for r in residuals])
        for tensor in case.outputs + ([] if in_place else residual_outs):
            tensor.view(torch.uint8).fill_(POISON)
        synchronize(self.devices)
        eps = 1e-5
        if per_rank:
            run_ranks(self.n, lambda r: self.runtime.all_reduce_rmsnorm_rank(
                r, case.inputs[r], case.outputs[r], residuals[r], weights[r],
                None if in_place else residual_outs[r], case.streams[r], eps=eps))
            self.runtime.synchronize()
        else:
            self.runtime.all_reduce_rmsnorm(case.inputs, case.outputs, residuals, weights,
                                            None if in_place else residual_outs,
                                            streams=case.streams, eps=eps)
        synchronize(self.devices)
        summed = case.expected[0].view(dtype).view(rows, hidden)
        stored = (summed.float() + residual_host.float()).to(dtype)
        for r in range(self.n):
            self.assertTrue(torch.equal(as_bytes(residual_outs[r]), as_bytes(stored)),
                            f"rank {r}'s residual_out differs from sum + residual")
            self.assertTrue(torch.equal(as_bytes(case.outputs[r]), as_bytes(case.outputs[0])),
                            f"rank {r}'s output differs from rank 0's")
        x = stored.double()
        exact = x / torch.sqrt((x * x).mean(dim=-1, keepdim=True) + eps) * weight_host.double()
        # Two roundings to the dtype; for fp32, the fp32 sums of squares of up to 4096 elements
        # (a few 1e-6 relative) dominate.
        unit = {torch.bfloat16: 2.0 ** -8, torch.float16: 2.0 ** -11}.get(dtype, 2.0 ** -16)
        error = (case.outputs[0].cpu().double() - exact).abs()
        bound = 2 * unit * exact.abs() + 1e-6
        self.assertTrue(bool((error <= bound).all()),
                        f"output off the RMSNorm by up to {float(error.max())}")

    def test_bad_arguments_raise_before_the_call(self):
        case = self.case((2, 8), torch.float16)
        integers = [t.to(torch.int32) for t in case.inputs]
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "ltx reduces torch.bfloat16"):
            self.runtime.all_reduce(integers, integers)
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "reduction = 'mean'"):
            self.runtime.prepare_all_reduce_rank(0, case.inputs[0], case.outputs[0], "mean")
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "differ in shape"):
            self.runtime.prepare_all_reduce_rank(0, case.inputs[0], case.outputs[0].view(16))
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "do not match token counts"):
            self.runtime.reduce_scatter(case.inputs, case.outputs, counts=[2] * self.n)
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "does not have hidden = 8"):
            self.runtime.prepare_all_reduce_rmsnorm_rank(0, case.inputs[0], case.outputs[0],
                                                         case.inputs[0], case.inputs[0][0, :4])
        self.runtime.status()  # Nothing reached the library: still usable.
        # The same refusal from a per-rank call stops the Runtime (its peers would wait for the
        # call), until reset().
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "reduction = 'mean'"):
            self.runtime.all_reduce_rank(0, case.inputs[0], case.outputs[0], "mean")
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "reduction = 'mean'"):
            self.runtime.status()
        with self.assertRaisesRegex(ltx.FailedPreconditionError, "reduction = 'mean'"):
            self.runtime.all_reduce_rank(0, case.inputs[0], case.outputs[0])
        self.runtime.reset()
        self.runtime.status()


if __name__ == "__main__":
    sys.exit(gpu_test.main(__file__, "python reduce tests"))
