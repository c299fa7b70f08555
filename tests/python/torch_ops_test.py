"""Tests of ltx's PyTorch custom ops (ltx.torch_ops; plain unittest, no pytest):

    PYTHONPATH=<prefix>/lib/python python3 tests/python/torch_ops_test.py

The fake (meta) implementations need torch only. The GPU tests run a small model step on the
ranks of the rank layout (ltx.rank_layout: LTX_TEST_DEVICES, LTX_TEST_RANKS, else every visible
GPU; at least two, which share a GPU when only one is visible), each rank on its own stream and
all ranks in turn from one thread: a projection, the all-to-all sequence -> heads and back, and
an AllGather, compiled with torch.compile(fullgraph=True), then captured per rank into a CUDA
graph and replayed. Every step draws new random inputs, the outputs of the previous step are
poisoned before they are freed (the step's new outputs come from that memory) and graph outputs
before every replay, and every output is compared byte-exact with torch.cat and slices of the
step's own projections.

Exit status: 0 when every test passed, 1 when one failed, 77 when a test skipped (no torch, a
torch without torch.library.custom_op, or no GPU; 1 under LTX_REQUIRE_RUN=1).
"""

import os
import sys
import unittest

# Ranks may share a GPU: what kernels/PROTOCOL.md ("Ranks that share a GPU") asks of the process,
# set before torch starts CUDA.
os.environ.setdefault("CUDA_MODULE_LOADING", "EAGER")
os.environ.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "32")

import ltx  # noqa: E402
from ltx import rank_layout  # noqa: E402

import gpu_test  # noqa: E402  (its rank layout and helpers)

try:
    import torch
    import ltx.torch_ops
    SKIP = None
except ImportError as e:  # Reported as a skip below.
    torch, SKIP = None, f"needs torch 2.4 or later ({e})"

POISON = 0xA5
HEADS_PER_RANK, HEAD_DIM, BATCH = 2, 32, 2


@unittest.skipIf(SKIP, SKIP)
class FakeShapeTest(unittest.TestCase):
    """The ops on meta tensors: their fake implementations, as torch.compile traces them."""

    def test_all_gather(self):
        x = torch.empty(2, 3, 8, dtype=torch.bfloat16, device="meta")
        y = torch.ops.ltx.all_gather(x, 1, 1, [4, 3, 0])
        self.assertEqual((tuple(y.shape), y.dtype, y.device.type), ((2, 7, 8), torch.bfloat16,
                                                                    "meta"))
        y = torch.ops.ltx.all_gather(torch.empty(5, 3, dtype=torch.int64, device="meta"), 1, 0,
                                     [5, 2], 0)
        self.assertEqual((tuple(y.shape), y.dtype), ((7, 3), torch.int64))

    def test_all_to_all(self):
        seq = torch.empty(2, 3, 4, 16, dtype=torch.float16, device="meta")
        heads = torch.ops.ltx.all_to_all(seq, 1, 0, [3, 5], "seq_to_heads")
        self.assertEqual((tuple(heads.shape), heads.dtype), ((2, 8, 2, 16), torch.float16))
        back = torch.ops.ltx.all_to_all(heads, 1, 1, [3, 5], "heads_to_seq")
        self.assertEqual(tuple(back.shape), (2, 5, 4, 16))
        split = torch.ops.ltx.all_to_all(seq, 1, 1, [3, 5], "seq_to_heads", [3, 1])
        self.assertEqual(tuple(split.shape), (2, 8, 1, 16))
        self.assertEqual(tuple(torch.ops.ltx.all_to_all(split, 1, 1, [3, 5], "heads_to_seq",
                                                        [3, 1]).shape), (2, 5, 4, 16))
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "direction"):
            torch.ops.ltx.all_to_all(seq, 1, 0, [3, 5], "sideways")

    def test_all_reduce(self):
        x = torch.empty(2, 3, 8, dtype=torch.float32, device="meta")
        y = torch.ops.ltx.all_reduce(x, 1, 1, "max")
        self.assertEqual((tuple(y.shape), y.dtype, y.device.type), ((2, 3, 8), torch.float32,
                                                                    "meta"))
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "reduction"):
            torch.ops.ltx.all_reduce(x, 1, 1, "mean")
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "ltx reduces"):
            torch.ops.ltx.all_reduce(x.to(torch.int32), 1, 1, "sum")

    def test_all_reduce_rmsnorm(self):
        x = torch.empty(3, 64, dtype=torch.bfloat16, device="meta")
        w = torch.empty(64, dtype=torch.bfloat16, device="meta")
        normed, residual = torch.ops.ltx.all_reduce_rmsnorm(x, x, w, 1, 0, 1e-5)
        self.assertEqual((tuple(normed.shape), normed.dtype, tuple(residual.shape)),
                         ((3, 64), torch.bfloat16, (3, 64)))
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "last dimension"):
            torch.ops.ltx.all_reduce_rmsnorm(x, x, w[:32], 1, 0, 1e-5)
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "one dtype"):
            torch.ops.ltx.all_reduce_rmsnorm(x, x.float(), w, 1, 0, 1e-5)

    def test_reduce_scatter(self):
        x = torch.empty(2, 8, 16, dtype=torch.bfloat16, device="meta")
        y = torch.ops.ltx.reduce_scatter(x, 1, 1, [3, 5], "sum")
        self.assertEqual((tuple(y.shape), y.dtype), ((2, 5, 16), torch.bfloat16))
        y = torch.ops.ltx.reduce_scatter(x, 1, 0, [1, 1], "min", 0)
        self.assertEqual(tuple(y.shape), (1, 8, 16))
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "rank 2 of 2"):
            torch.ops.ltx.reduce_scatter(x, 1, 2, [3, 5], "sum")


def choose_devices():
    """(devices, why the GPU tests skip or None): those of gpu_test, at least two ranks."""
    return ([], SKIP) if SKIP else gpu_test.choose_devices()


def as_bytes(tensor):
    return tensor.cpu().view(torch.uint8)


class CompiledStepTest(unittest.TestCase):
    """The model step of the module comment, eager, compiled and captured."""

    @classmethod
    def setUpClass(cls):
        cls.devices = gpu_test.devices_or_skip(choose_devices)
        n = len(cls.devices)
        cls.runtime = ltx.Runtime(devices=cls.devices, timeout=30.0)
        cls.heads = HEADS_PER_RANK * n
        cls.hidden = cls.heads * HEAD_DIM
        cls.counts = [5 + 3 * r for r in range(n)]
        cls.counts[1] = 0  # A rank without tokens.
        cls.streams = gpu_test.rank_streams(cls.devices)
        generator = torch.Generator().manual_seed(0)
        cls.inputs = [torch.empty(BATCH, c, cls.hidden, dtype=torch.bfloat16, device=f"cuda:{d}")
                      for c, d in zip(cls.counts, cls.devices)]
        weight = torch.randn(cls.hidden, cls.hidden, generator=generator) / cls.hidden ** 0.5
        cls.weights = [weight.to(torch.bfloat16).to(f"cuda:{d}") for d in cls.devices]
        step = cls.make_step(ltx.torch_ops.register_runtime(cls.runtime))
        cls.steps = {False: step, True: torch.compile(step, fullgraph=True, dynamic=False)}
        cls.warm = False

    @classmethod
    def tearDownClass(cls):
        cls.runtime.close()

    @classmethod
    def make_step(cls, handle):
        """Rank `rank`'s step: its tokens' projection h, h's all-to-all to heads and back to the
        sequence, and the AllGather of that; returns all four. The collectives are chained by
        their data, so every rank's graph issues them in one order."""
        counts, heads = list(cls.counts), cls.heads

        def step(x, w, rank: int):
            h = torch.nn.functional.silu(x @ w)
            q = h.view(h.shape[0], h.shape[1], heads, HEAD_DIM)
            by_heads = torch.ops.ltx.all_to_all(q, handle, rank, counts, "seq_to_heads")
            back = torch.ops.ltx.all_to_all(by_heads, handle, rank, counts, "heads_to_seq")
            gathered = torch.ops.ltx.all_gather(back.flatten(2), handle, rank, counts)
            return h, by_heads, back, gathered
        return step

    def refill(self, seed):
        """New random inputs in the same tensors; waits until they are written."""
        generator = torch.Generator().manual_seed(seed)
        for x in self.inputs:
            x.copy_(torch.randn(x.shape, generator=generator).to(torch.bfloat16))
        gpu_test.synchronize(self.devices)

    def on_rank(self, compiled, rank):
        """Rank `rank`'s step, compiled or eager, on the rank's GPU and stream."""
        with torch.cuda.device(self.devices[rank]), torch.cuda.stream(self.streams[rank]):
            return self.steps[compiled](self.inputs[rank], self.weights[rank], rank)

    def check(self, results, what):
        """Compares every rank's collective outputs in `results` (one step's tuple per rank)
        byte-exact with torch.cat and slices of the ranks' projections h. An op that failed
        raises its own error first (a per-rank call reports it after the call returned)."""
        gpu_test.synchronize(self.devices)
        self.runtime.synchronize()
        shards = [as_bytes(h.view(*h.shape[:2], self.heads, HEAD_DIM)) for h, *_ in results]
        sequence = torch.cat(shards, dim=1)
        share = HEADS_PER_RANK
        for r, (h, by_heads, back, gathered) in enumerate(results):
            self.assertTrue(torch.equal(as_bytes(by_heads),
                                        sequence[:, :, r * share:(r + 1) * share]),
                            f"{what}: rank {r}'s heads differ from its slice of the sequence")
            self.assertTrue(torch.equal(as_bytes(back), shards[r]),
                            f"{what}: rank {r}'s sequence -> heads -> sequence changed h")
            self.assertTrue(torch.equal(as_bytes(gathered), sequence.flatten(2)),
                            f"{what}: rank {r}'s gathered tokens differ from torch.cat")

    def poison(self, results):
        """Fills every collective output in `results` with POISON and waits."""
        for _, *outputs in results:
            for output in outputs:
                output.view(torch.uint8).fill_(POISON)
        gpu_test.synchronize(self.devices)

    def warm_up(self):
        """Runs each rank's compute alone, then each rank's step once eagerly, then compiles each rank's step and runs it with
        the other ranks' matching calls made eagerly. torch.compile specialises on the rank, so
        every rank compiles; each compiles and loads its kernels while no collective waits on a
        GPU (a kernel loaded while a co-located rank waits would start only after the wait
        timed out)."""
        if self.warm:
            return
        n = len(self.devices)
        self.refill(1)
        # Each rank's compute alone first: its stream's first matmul sets up cuBLAS and the
        # allocator's blocks for that stream, which may wait for the whole GPU.
        for r in range(n):
            with torch.cuda.device(self.devices[r]), torch.cuda.stream(self.streams[r]):
                torch.nn.functional.silu(self.inputs[r] @ self.weights[r])
        gpu_test.synchronize(self.devices)
        eager = [self.on_rank(False, r) for r in range(n)]
        self.check(eager, "eager ops")
        self.poison(eager)
        for r in range(n):
            first = self.on_rank(True, r)  # Before the other ranks' calls: none waits yet.
            results = [first if s == r else self.on_rank(False, s) for s in range(n)]
            self.check(results, f"first compiled step of rank {r}")
            self.poison(results)
        type(self).warm = True

    def test_compiled_step(self):
        self.warm_up()
        results = []
        for step in range(4):
            self.poison(results)
            results = None  # The outputs' memory goes back to the allocator, poisoned.
            self.refill(100 + step)
            results = [self.on_rank(True, r) for r in range(len(self.devices))]
            self.check(results, f"compiled step {step}")

    def test_graph_capture_and_replay_of_the_compiled_step(self):
        self.warm_up()
        graphs, results = [], []
        for rank, device in enumerate(self.devices):
            gpu_test.synchronize(self.devices)
            with torch.cuda.device(device):
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph, stream=self.streams[rank],
                                      capture_error_mode="thread_local"):
                    results.append(self.steps[True](self.inputs[rank], self.weights[rank],
                                                    rank))
            graphs.append(graph)
        for step in range(4):
            self.poison(results)
            self.refill(200 + step)
            for rank, graph in enumerate(graphs):
                with torch.cuda.device(self.devices[rank]), torch.cuda.stream(self.streams[rank]):
                    graph.replay()
            self.check(results, f"graph replay {step}")

    def test_unknown_handle_raises(self):
        x = torch.zeros(1, self.counts[0], self.hidden, dtype=torch.bfloat16,
                        device=f"cuda:{self.devices[0]}")
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "no ltx.Runtime is registered"):
            torch.ops.ltx.all_gather(x, 1 << 40, 0, self.counts)
        self.runtime.status()  # Nothing reached the library: still usable.


def main() -> int:
    """Runs the tests: 0 when all passed, 1 when one failed, else the skip's status."""
    if not gpu_test.announce_layout("torch ops tests", choose_devices,
                                    f", torch {torch.__version__}" if torch else ""):
        return 1
    result = unittest.main(verbosity=2, exit=False).result
    if not result.wasSuccessful():
        return 1
    if result.skipped:
        return rank_layout.skip_status("torch ops tests", result.skipped[0][1])
    print("torch ops tests: PASS", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
