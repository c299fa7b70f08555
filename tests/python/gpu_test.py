"""GPU tests of the Python package ltx with PyTorch (plain unittest, no pytest):

    PYTHONPATH=<prefix>/lib/python python3 tests/python/gpu_test.py

Run without arguments, it runs the tests twice, each in a child process: with PyTorch's default
caching allocator and with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, and prints one line
per allocator mode (a child that fails or crashes is reported, never taken down with the parent).
The parent's exit status is that of the default mode (77 when it skipped every test). With --child it runs the tests in this
process. Every case uses random data, poisons the outputs before every call and compares the
outputs byte-exact with torch.cat of the shards along the token dimension (AllGather) or with
the head slices or token slices of the concatenated shards (all-to-all). Fewer than two GPUs
(or no torch): the tests are skipped, and say why.
"""

import os
import re
import subprocess
import sys
import threading
import unittest

try:
    import torch
except ImportError:  # Reported as a skip below.
    torch = None

import ltx

GPUS = torch.cuda.device_count() if torch is not None and torch.cuda.is_available() else 0
SKIP = None if GPUS >= 2 else f"needs 2 GPUs and torch with CUDA ({GPUS} visible)"
POISON = 0xA5
SKIPPED_EXIT = 77  # Exit status when every test was skipped.
DTYPES = ([torch.bfloat16, torch.float16, torch.float32, torch.float8_e4m3fn,
           torch.float8_e5m2, torch.int8, torch.uint8] if torch is not None else [])


def random_tensor(shape, dtype, device, generator):
    """Random bytes viewed as `dtype` (every bit pattern, NaNs included: the copy is bytes)."""
    size = torch.empty((), dtype=dtype).element_size()
    raw = torch.randint(0, 256, tuple(shape[:-1]) + (shape[-1] * size,), dtype=torch.uint8,
                        generator=generator)
    return raw.view(dtype).to(device)


class Case:
    """One AllGather: per-rank inputs of [batch, counts[r], hidden] and poisoned outputs."""

    def __init__(self, counts, dtype, batch=2, hidden=64, seed=0):
        self.counts, self.dtype = counts, dtype
        generator = torch.Generator().manual_seed(seed)
        self.inputs = [random_tensor((batch, c, hidden), dtype, f"cuda:{r}", generator)
                       for r, c in enumerate(counts)]
        self.outputs = [torch.empty((batch, sum(counts), hidden), dtype=dtype, device=f"cuda:{r}")
                        for r in range(len(counts))]
        self.streams = [torch.cuda.Stream(device=r) for r in range(len(counts))]

    def refill(self, seed):
        """New random inputs (same buffers), poisoned outputs; waits until both are done."""
        generator = torch.Generator().manual_seed(seed)
        for tensor in self.inputs:
            tensor.copy_(random_tensor(tensor.shape, self.dtype, "cpu", generator))
        self.poison()

    def poison(self):
        for output in self.outputs:
            output.view(torch.uint8).fill_(POISON)
        for r in range(len(self.counts)):
            torch.cuda.synchronize(r)

    def check(self, test):
        expected = torch.cat([t.cpu().view(torch.uint8) for t in self.inputs], dim=1)
        for r, output in enumerate(self.outputs):
            torch.cuda.synchronize(r)
            test.assertTrue(torch.equal(output.cpu().view(torch.uint8), expected),
                            f"rank {r}: output differs from torch.cat of the shards "
                            f"(dtype {self.dtype}, counts {self.counts})")


class AllToAllCase(Case):
    """One all-to-all over n ranks: random inputs and poisoned outputs of the direction's
    layouts ([batch, counts[r], heads, head_dim] and [batch, sum(counts), head_counts[r],
    head_dim], head_counts defaulting to heads_per_rank each); refill and poison are those of
    Case."""

    def __init__(self, counts, dtype, direction, batch=2, heads_per_rank=2, head_dim=24,
                 seed=0, head_counts=None):
        n = len(counts)
        self.counts, self.dtype, self.direction = counts, dtype, direction
        self.head_counts = list(head_counts or [heads_per_rank] * n)
        seq = [(batch, c, sum(self.head_counts), head_dim) for c in counts]
        split = [(batch, sum(counts), h, head_dim) for h in self.head_counts]
        in_shapes, out_shapes = (seq, split) if direction == "seq_to_heads" else (split, seq)
        generator = torch.Generator().manual_seed(seed)
        self.inputs = [random_tensor(shape, dtype, f"cuda:{r}", generator)
                       for r, shape in enumerate(in_shapes)]
        self.outputs = [torch.empty(shape, dtype=dtype, device=f"cuda:{r}")
                        for r, shape in enumerate(out_shapes)]
        self.streams = [torch.cuda.Stream(device=r) for r in range(n)]

    def expected(self, rank):
        """Rank `rank`'s output computed by torch from the inputs, as bytes."""
        shards = [t.cpu().view(torch.uint8) for t in self.inputs]
        if self.direction == "seq_to_heads":
            first = sum(self.head_counts[:rank])
            full = torch.cat(shards, dim=1)
            return full[:, :, first:first + self.head_counts[rank]].contiguous()
        start = sum(self.counts[:rank])
        full = torch.cat(shards, dim=2)
        return full[:, start:start + self.counts[rank]].contiguous()

    def check(self, test):
        for r, output in enumerate(self.outputs):
            torch.cuda.synchronize(r)
            test.assertTrue(torch.equal(output.cpu().view(torch.uint8), self.expected(r)),
                            f"rank {r}: all-to-all output differs from torch's slices "
                            f"(dtype {self.dtype}, counts {self.counts}, head_counts "
                            f"{self.head_counts}, {self.direction})")


def count_patterns(n):
    return [[5] * n, [3 + 2 * r for r in range(n)], [0] + [7] * (n - 1), [0] * (n - 1) + [1]]


@unittest.skipIf(SKIP, SKIP)
class GpuTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.runtime = ltx.Runtime(timeout=10.0)

    @classmethod
    def tearDownClass(cls):
        cls.runtime.close()

    def setUp(self):
        self.n = self.runtime.world_size

    def test_coordinated_every_dtype_and_counts(self):
        for dtype in DTYPES:
            for counts in count_patterns(self.n):
                with self.subTest(dtype=str(dtype), counts=counts):
                    case = Case(counts, dtype, seed=len(counts) + sum(counts))
                    case.poison()
                    self.runtime.all_gather(case.inputs, case.outputs, streams=case.streams)
                    case.check(self)

    def test_coordinated_protocols_and_sizes(self):
        for protocol, hidden, count in [("auto", 4096, 300), ("direct", 4096, 300),
                                        ("one_trip", 3, 17), ("copy_engine", 4096, 40),
                                        ("auto", 7, 1001)]:
            with self.subTest(protocol=protocol, hidden=hidden):
                case = Case([count + r for r in range(self.n)], torch.bfloat16, batch=1,
                            hidden=hidden, seed=hidden)
                case.poison()
                op = self.runtime.all_gather(case.inputs, case.outputs, streams=case.streams,
                                             protocol=protocol, wait=False)
                op.wait(30.0)
                op.close()
                case.check(self)

    def run_ranks(self, call):
        """Runs call(rank) on one thread per rank; re-raises the first error."""
        errors = []

        def body(rank):
            try:
                call(rank)
            except Exception as e:  # Collected for the main thread.
                errors.append(e)

        threads = [threading.Thread(target=body, args=(r,)) for r in range(self.n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]

    def test_per_rank_threads(self):
        for dtype in DTYPES:
            for counts in count_patterns(self.n):
                with self.subTest(dtype=str(dtype), counts=counts):
                    case = Case(counts, dtype, seed=7 * sum(counts))
                    for step in range(3):
                        case.refill(step)
                        self.run_ranks(lambda r: self.runtime.all_gather_rank(
                            r, case.inputs[r], case.outputs[r], counts, case.streams[r]))
                        case.check(self)

    def test_prepared_rank_calls_repeat_with_new_data(self):
        for counts in count_patterns(self.n):
            with self.subTest(counts=counts):
                case = Case(counts, torch.bfloat16, seed=11 * sum(counts))
                calls = [self.runtime.prepare_all_gather_rank(r, case.inputs[r], case.outputs[r],
                                                              counts, case.streams[r])
                         for r in range(self.n)]
                for step in range(5):
                    case.refill(200 + step)
                    self.run_ranks(lambda r: calls[r]())
                    case.check(self)

    def test_graph_capture_and_replay(self):
        for counts, hidden in [([3 + r for r in range(self.n)], 64), ([100] * self.n, 4096)]:
            with self.subTest(counts=counts, hidden=hidden):
                case = Case(counts, torch.bfloat16, batch=1, hidden=hidden)
                graphs = []
                for r in range(self.n):
                    with torch.cuda.device(r):
                        graph = torch.cuda.CUDAGraph()
                        with torch.cuda.graph(graph, stream=case.streams[r],
                                              capture_error_mode="thread_local"):
                            self.runtime.all_gather_rank(r, case.inputs[r], case.outputs[r],
                                                         counts, case.streams[r])
                        graphs.append(graph)
                for step in range(4):
                    case.refill(100 + step)
                    for r, graph in enumerate(graphs):
                        with torch.cuda.device(r), torch.cuda.stream(case.streams[r]):
                            graph.replay()
                    case.check(self)

    def test_missing_rank_times_out_and_reset_recovers(self):
        counts = [4] * self.n
        case = Case(counts, torch.float16)
        self.runtime.all_gather_rank(0, case.inputs[0], case.outputs[0], counts,
                                     case.streams[0], timeout=0.2)
        with self.assertRaises(ltx.DeadlineExceededError) as caught:
            self.runtime.synchronize(10.0)
        self.assertIn("DEADLINE_EXCEEDED", str(caught.exception))
        with self.assertRaises(ltx.FailedPreconditionError):
            self.runtime.all_gather(case.inputs, case.outputs, streams=case.streams)
        self.runtime.reset(10.0)
        case.poison()
        self.runtime.all_gather(case.inputs, case.outputs, streams=case.streams)
        case.check(self)

    def test_all_to_all_coordinated_every_dtype_and_counts(self):
        for direction in ltx.DIRECTIONS:
            for dtype in DTYPES:
                for counts in count_patterns(self.n):
                    with self.subTest(direction=direction, dtype=str(dtype), counts=counts):
                        case = AllToAllCase(counts, dtype, direction, seed=3 * sum(counts))
                        case.poison()
                        self.runtime.all_to_all(case.inputs, case.outputs, streams=case.streams,
                                                direction=direction)
                        case.check(self)

    def test_all_to_all_per_rank_threads(self):
        for direction in ltx.DIRECTIONS:
            for counts in count_patterns(self.n) + [[257 + 3 * r for r in range(self.n)]]:
                with self.subTest(direction=direction, counts=counts):
                    case = AllToAllCase(counts, torch.bfloat16, direction, heads_per_rank=3,
                                        head_dim=64, seed=5 * sum(counts))
                    calls = [self.runtime.prepare_all_to_all_rank(
                        r, case.inputs[r], case.outputs[r], counts, case.streams[r],
                        direction=direction) for r in range(self.n)]
                    for step in range(3):
                        case.refill(300 + step)
                        self.run_ranks(lambda r: calls[r]())
                        case.check(self)
                    case.refill(400)
                    self.run_ranks(lambda r: self.runtime.all_to_all_rank(
                        r, case.inputs[r], case.outputs[r], counts, case.streams[r],
                        direction=direction))
                    case.check(self)

    def test_all_to_all_uneven_head_counts(self):
        splits = [[2 + r % 2 for r in range(self.n)], [0] + [3] * (self.n - 1)]
        for direction in ltx.DIRECTIONS:
            for head_counts in splits:
                with self.subTest(direction=direction, head_counts=head_counts):
                    counts = [3 + 2 * r for r in range(self.n)]
                    case = AllToAllCase(counts, torch.bfloat16, direction, head_dim=40,
                                        seed=sum(head_counts), head_counts=head_counts)
                    case.poison()
                    self.runtime.all_to_all(case.inputs, case.outputs, streams=case.streams,
                                            direction=direction, head_counts=head_counts)
                    case.check(self)
                    case.refill(700)
                    self.run_ranks(lambda r: self.runtime.all_to_all_rank(
                        r, case.inputs[r], case.outputs[r], counts, case.streams[r],
                        direction=direction, head_counts=head_counts))
                    case.check(self)

    def test_all_to_all_protocols(self):
        counts = [3 + 2 * r for r in range(self.n)]
        head_counts = [2 + r % 2 for r in range(self.n)]
        for protocol in ("direct", "one_trip", "copy_engine"):
            for direction in ltx.DIRECTIONS:
                with self.subTest(protocol=protocol, direction=direction):
                    case = AllToAllCase(counts, torch.bfloat16, direction, head_dim=40,
                                        seed=len(protocol), head_counts=head_counts)
                    case.poison()
                    self.runtime.all_to_all(case.inputs, case.outputs, streams=case.streams,
                                            direction=direction, head_counts=head_counts,
                                            protocol=protocol)
                    case.check(self)
                    case.refill(800)
                    self.run_ranks(lambda r: self.runtime.all_to_all_rank(
                        r, case.inputs[r], case.outputs[r], counts, case.streams[r],
                        direction=direction, head_counts=head_counts, protocol=protocol))
                    case.check(self)

    def test_all_to_all_round_trip_returns_the_input(self):
        for counts in count_patterns(self.n):
            with self.subTest(counts=counts):
                there = AllToAllCase(counts, torch.float16, "seq_to_heads", seed=sum(counts))
                back = [torch.empty_like(t) for t in there.inputs]
                for tensor in back:
                    tensor.view(torch.uint8).fill_(POISON)
                there.poison()
                self.runtime.all_to_all(there.inputs, there.outputs, streams=there.streams)
                self.run_ranks(lambda r: self.runtime.all_to_all_rank(
                    r, there.outputs[r], back[r], counts, there.streams[r],
                    direction="heads_to_seq"))
                for r in range(self.n):
                    torch.cuda.synchronize(r)
                    self.assertTrue(torch.equal(back[r].cpu().view(torch.uint8),
                                                there.inputs[r].cpu().view(torch.uint8)),
                                    f"rank {r}: seq -> heads -> seq changed the input")

    def test_all_to_all_and_all_gather_interleave(self):
        counts = [4 + r for r in range(self.n)]
        gather = Case(counts, torch.bfloat16, seed=1)
        a2a = AllToAllCase(counts, torch.bfloat16, "seq_to_heads", seed=2)
        for step in range(3):
            gather.refill(500 + step)
            a2a.refill(600 + step)
            self.run_ranks(lambda r: (
                self.runtime.all_gather_rank(r, gather.inputs[r], gather.outputs[r], counts,
                                             gather.streams[r]),
                self.runtime.all_to_all_rank(r, a2a.inputs[r], a2a.outputs[r], counts,
                                             gather.streams[r])))
            gather.check(self)
            a2a.check(self)

    def test_all_to_all_bad_shapes_raise_before_the_call(self):
        counts = [2] * self.n
        case = AllToAllCase(counts, torch.bfloat16, "seq_to_heads")
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "do not match token counts"):
            self.runtime.all_to_all(case.inputs, case.outputs, counts=[3] * self.n)
        with self.assertRaises(ltx.InvalidArgumentError):
            self.runtime.all_to_all(case.inputs, case.outputs, direction="heads_to_seq")
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "direction"):
            self.runtime.all_to_all_rank(0, case.inputs[0], case.outputs[0], counts,
                                         direction="up")
        self.runtime.status()  # Nothing reached the library: still usable.

    def test_bad_tensors_raise_before_the_call(self):
        counts = [2] * self.n
        case = Case(counts, torch.bfloat16)
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "is on cuda:1"):
            self.runtime.all_gather_rank(0, case.inputs[1], case.outputs[0], counts)
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "not contiguous"):
            self.runtime.all_gather_rank(0, case.inputs[0].transpose(1, 2), case.outputs[0],
                                         counts)
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "torch.float64"):
            self.runtime.all_gather_rank(0, case.inputs[0].double(), case.outputs[0].double(),
                                         counts)
        self.runtime.status()  # Nothing reached the library: still usable.


MODES = [("default", None), ("expandable_segments", "expandable_segments:True")]


def run_children():
    """Runs the tests in one child process per allocator mode; returns the default's status."""
    results = {}
    for name, conf in MODES:
        env = dict(os.environ)
        env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
        if conf:
            env["PYTORCH_CUDA_ALLOC_CONF"] = conf
        print(f"=== allocator {name}", flush=True)
        try:
            child = subprocess.run([sys.executable, os.path.abspath(__file__), "--child"],
                                   env=env, timeout=150, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)
            output, code = child.stdout, child.returncode
        except subprocess.TimeoutExpired as e:
            output, code = (e.stdout or b"").decode(errors="replace"), "timeout"
        print(output, flush=True)
        tail = [line for line in output.splitlines() if line.strip()][-1:] or [""]
        ran = re.search(r"^Ran (\d+) test", output, re.M)
        skipped = re.search(r"skipped=(\d+)", tail[0])
        if code == 0 and ran and skipped and ran.group(1) == skipped.group(1):
            results[name] = f"SKIPPED ({SKIP or tail[0]})"
        elif code == 0:
            results[name] = f"PASS ({tail[0]})"
        elif isinstance(code, int) and code < 0:
            results[name] = f"CRASH (signal {-code})"
        else:
            first = re.search(r"^\S*Error: .*$", output, re.M)
            cause = first.group(0)[:300] if first else "no exception printed"
            results[name] = f"FAIL (exit {code}: {tail[0]}; first error: {cause})"
    summary = "; ".join(f"{name}: {result}" for name, result in results.items())
    print(f"python gpu tests: {summary}")
    if results["default"].startswith("SKIPPED"):
        return SKIPPED_EXIT
    return 0 if results["default"].startswith("PASS") else 1


if __name__ == "__main__":
    if "--child" in sys.argv:
        sys.argv.remove("--child")
        unittest.main(verbosity=2)
    sys.exit(run_children())
