"""GPU tests of the Python package ltx with PyTorch (plain unittest, no pytest):

    PYTHONPATH=<prefix>/lib/python python3 tests/python/gpu_test.py

Run without arguments, it runs the tests twice, each in a child process: with PyTorch's default
caching allocator and with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, and prints one line
per allocator mode (a child that fails or crashes is reported, never taken down with the parent).
The parent's exit status is 0 when both modes passed, 1 when either failed, else 77 (skipped;
1 under LTX_REQUIRE_RUN=1). With --child it runs the tests in this process.

The ranks are those of the rank layout (ltx.rank_layout: LTX_TEST_DEVICES, LTX_TEST_RANKS, else
every visible GPU), at least two: on one GPU two ranks share it. Rank r's tensors live on
cuda:{devices[r]}, each rank with its own stream. Every case uses random data, poisons the
outputs before every call and compares the outputs byte-exact with torch.cat of the shards along
the token dimension (AllGather) or with the head slices or token slices of the concatenated
shards (all-to-all), also for lists of three tensors (Q, K, V) moved in one op, each tensor
with its own data and checked on its own. Without a GPU (or torch) the tests are skipped, and
say why.
"""

import os
import re
import subprocess
import sys
import threading
import unittest

# Ranks may share a GPU: what kernels/PROTOCOL.md ("Ranks that share a GPU") asks of the process,
# set before torch starts CUDA.
os.environ.setdefault("CUDA_MODULE_LOADING", "EAGER")
os.environ.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "32")

try:
    import torch  # noqa: E402
except ImportError:  # Reported as a skip below.
    torch = None

import ltx
from ltx import rank_layout

POISON = 0xA5
DTYPES = ([torch.bfloat16, torch.float16, torch.float32, torch.float8_e4m3fn,
           torch.float8_e5m2, torch.int8, torch.uint8] if torch is not None else [])


def choose_devices():
    """(devices, why the tests skip or None): the rank layout, widened to two ranks. Raises
    ltx.InvalidArgumentError for a malformed layout, also without torch or a GPU."""
    usable = torch is not None and torch.cuda.is_available()
    devices = rank_layout.devices_for_run(torch.cuda.device_count() if usable else 0, needed=2)
    return devices, None if devices else "needs torch with CUDA and a GPU"


def devices_or_skip(choose=choose_devices):
    """The devices of choose() (choose_devices by default); raises unittest.SkipTest with its
    reason when it gives none."""
    devices, skip = choose()
    if skip:
        raise unittest.SkipTest(skip)
    return devices


def announce_layout(name: str, choose=choose_devices, note: str = "") -> bool:
    """Before any test runs: checks LTX_REQUIRE_RUN and the rank layout of choose() and prints
    "`name`: " and the layout, or why the tests skip, then `note`. False, after printing
    "`name`: FAILED" and why, when either is malformed."""
    try:
        rank_layout.require_run()
        devices, skip = choose()
    except ltx.InvalidArgumentError as e:
        print(f"{name}: FAILED, {e}")
        return False
    print(f"{name}: {f'rank layout {devices}' if devices else skip}{note}", flush=True)
    return True


def synchronize(devices):
    """Waits for the work on every GPU of `devices`."""
    for device in set(devices):
        torch.cuda.synchronize(device)


# (rank, device) -> the torch stream rank_streams gave that rank, kept for the process.
_RANK_STREAMS = {}


def rank_streams(devices):
    """One stream per rank, the same for every case of the process, as the C++ harness ring
    keeps them: ranks that share a GPU wait for each other inside it, and a C++ harness whose
    buffer sets each kept streams of their own busy saw co-located ranks held in one hardware
    queue (kernels/PROTOCOL.md, "Ranks that share a GPU"); a new stream per case would cycle
    through PyTorch's pool of them. Call it from one thread before the ranks' threads start."""
    streams = []
    for rank, device in enumerate(devices):
        if (rank, device) not in _RANK_STREAMS:
            _RANK_STREAMS[(rank, device)] = torch.cuda.Stream(device=device)
        streams.append(_RANK_STREAMS[(rank, device)])
    return streams


def random_tensor(shape, dtype, device, generator):
    """Random bytes viewed as `dtype` (every bit pattern, NaNs included: the copy is bytes)."""
    size = torch.empty((), dtype=dtype).element_size()
    raw = torch.randint(0, 256, tuple(shape[:-1]) + (shape[-1] * size,), dtype=torch.uint8,
                        generator=generator)
    return raw.view(dtype).to(device)


class Case:
    """One AllGather over the ranks on `devices`: per-rank inputs of [batch, counts[r], hidden]
    on cuda:{devices[r]}, poisoned outputs, and one stream per rank."""

    def __init__(self, devices, counts, dtype, batch=2, hidden=64, seed=0):
        self.devices, self.counts, self.dtype = devices, counts, dtype
        generator = torch.Generator().manual_seed(seed)
        self.inputs = [random_tensor((batch, c, hidden), dtype, f"cuda:{d}", generator)
                       for d, c in zip(devices, counts)]
        self.outputs = [torch.empty((batch, sum(counts), hidden), dtype=dtype, device=f"cuda:{d}")
                        for d in devices]
        self.streams = rank_streams(devices)

    def refill(self, seed):
        """New random inputs (same buffers), poisoned outputs; waits until both are done."""
        generator = torch.Generator().manual_seed(seed)
        for tensor in self.inputs:
            tensor.copy_(random_tensor(tensor.shape, self.dtype, "cpu", generator))
        self.poison()

    def poison(self):
        for output in self.outputs:
            output.view(torch.uint8).fill_(POISON)
        synchronize(self.devices)

    def check(self, test):
        synchronize(self.devices)
        expected = torch.cat([t.cpu().view(torch.uint8) for t in self.inputs], dim=1)
        for r, output in enumerate(self.outputs):
            test.assertTrue(torch.equal(output.cpu().view(torch.uint8), expected),
                            f"rank {r}: output differs from torch.cat of the shards "
                            f"(dtype {self.dtype}, counts {self.counts})")


class AllToAllCase(Case):
    """One all-to-all over the ranks on `devices`: random inputs and poisoned outputs of the
    direction's layouts ([batch, counts[r], heads, head_dim] and [batch, sum(counts),
    head_counts[r], head_dim], head_counts defaulting to heads_per_rank each); refill and poison
    are those of Case."""

    def __init__(self, devices, counts, dtype, direction, batch=2, heads_per_rank=2,
                 head_dim=24, seed=0, head_counts=None):
        n = len(counts)
        self.devices, self.counts, self.dtype, self.direction = devices, counts, dtype, direction
        self.head_counts = list(head_counts or [heads_per_rank] * n)
        seq = [(batch, c, sum(self.head_counts), head_dim) for c in counts]
        split = [(batch, sum(counts), h, head_dim) for h in self.head_counts]
        in_shapes, out_shapes = (seq, split) if direction == "seq_to_heads" else (split, seq)
        generator = torch.Generator().manual_seed(seed)
        self.inputs = [random_tensor(shape, dtype, f"cuda:{d}", generator)
                       for d, shape in zip(devices, in_shapes)]
        self.outputs = [torch.empty(shape, dtype=dtype, device=f"cuda:{d}")
                        for d, shape in zip(devices, out_shapes)]
        self.streams = rank_streams(devices)

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
        synchronize(self.devices)
        for r, output in enumerate(self.outputs):
            test.assertTrue(torch.equal(output.cpu().view(torch.uint8), self.expected(r)),
                            f"rank {r}: all-to-all output differs from torch's slices "
                            f"(dtype {self.dtype}, counts {self.counts}, head_counts "
                            f"{self.head_counts}, {self.direction})")


def run_ranks(n, call):
    """Runs call(rank) for ranks 0 to n - 1, on one thread per rank; re-raises the first
    error."""
    errors = []

    def body(rank):
        try:
            call(rank)
        except Exception as e:  # Collected for the main thread.
            errors.append(e)

    threads = [threading.Thread(target=body, args=(r,)) for r in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def copy_engines_refused(test, protocol, call):
    """Runs call(), a coordinated call. Where ranks share a GPU, the Runtime may refuse explicit
    copy-engine calls (their copy streams would outnumber the GPU's hardware queues): then checks
    that the refusal says so and left the Runtime usable (a coordinated refusal does; a per-rank
    one would stop it), and returns True. Else returns False."""
    try:
        call()
    except ltx.UnimplementedError as e:
        shared = len(set(test.devices)) < len(test.devices)
        if protocol != "copy_engine" or not shared or "hardware queues" not in str(e):
            raise
        test.runtime.status()  # Refused for every rank before any launch: still usable.
        return True
    return False


def capture_ranks(devices, streams, call):
    """One CUDA graph per rank r, capturing call(r) on streams[r] (of GPU devices[r])."""
    graphs = []
    for r, device in enumerate(devices):
        with torch.cuda.device(device):
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, stream=streams[r], capture_error_mode="thread_local"):
                call(r)
            graphs.append(graph)
    return graphs


def replay_ranks(devices, streams, graphs):
    """Replays each rank r's graph on streams[r], rank after rank from this thread."""
    for r, graph in enumerate(graphs):
        with torch.cuda.device(devices[r]), torch.cuda.stream(streams[r]):
            graph.replay()


def per_rank_lists(cases, what: str, rank=None):
    """The tensors `what` ("inputs" or "outputs") of several cases of one shape as the lists of
    a call of several tensors: [case 0's, case 1's, ...] of rank `rank`, or of every rank in turn
    (rank None)."""
    if rank is not None:
        return [getattr(case, what)[rank] for case in cases]
    return [per_rank_lists(cases, what, r) for r in range(len(cases[0].devices))]


def count_patterns(n):
    return [[5] * n, [3 + 2 * r for r in range(n)], [0] + [7] * (n - 1), [0] * (n - 1) + [1]]


class RuntimeTestCase(unittest.TestCase):
    """Tests on one Runtime over the rank layout (self.runtime, self.devices, self.n ranks);
    skipped when choose_devices gives none."""

    @classmethod
    def setUpClass(cls):
        cls.devices = devices_or_skip()
        cls.runtime = ltx.Runtime(devices=cls.devices, timeout=10.0)

    @classmethod
    def tearDownClass(cls):
        cls.runtime.close()

    def setUp(self):
        self.n = self.runtime.world_size

    def tearDown(self):
        # A test that leaves the Runtime stopped (its failure reports the error) must not stop
        # the tests after it: the next test starts on a usable Runtime, so that one failure
        # reads as one.
        try:
            self.runtime.status()
        except ltx.Error:
            synchronize(self.devices)
            self.runtime.reset()


class GpuTest(RuntimeTestCase):
    def test_coordinated_every_dtype_and_counts(self):
        for dtype in DTYPES:
            for counts in count_patterns(self.n):
                with self.subTest(dtype=str(dtype), counts=counts):
                    case = Case(self.devices, counts, dtype, seed=len(counts) + sum(counts))
                    case.poison()
                    self.runtime.all_gather(case.inputs, case.outputs, streams=case.streams)
                    case.check(self)

    def test_coordinated_protocols_and_sizes(self):
        for protocol, hidden, count in [("auto", 4096, 300), ("direct", 4096, 300),
                                        ("one_trip", 3, 17), ("copy_engine", 4096, 40),
                                        ("auto", 7, 1001)]:
            with self.subTest(protocol=protocol, hidden=hidden):
                case = Case(self.devices, [count + r for r in range(self.n)], torch.bfloat16,
                            batch=1, hidden=hidden, seed=hidden)
                case.poison()

                def gather():
                    op = self.runtime.all_gather(case.inputs, case.outputs, streams=case.streams,
                                                 protocol=protocol, wait=False)
                    op.wait(30.0)
                    op.close()

                if not copy_engines_refused(self, protocol, gather):
                    case.check(self)

    def test_per_rank_threads(self):
        for dtype in DTYPES:
            for counts in count_patterns(self.n):
                with self.subTest(dtype=str(dtype), counts=counts):
                    case = Case(self.devices, counts, dtype, seed=7 * sum(counts))
                    for step in range(3):
                        case.refill(step)
                        run_ranks(self.n, lambda r: self.runtime.all_gather_rank(
                            r, case.inputs[r], case.outputs[r], counts, case.streams[r]))
                        case.check(self)

    def test_prepared_rank_calls_repeat_with_new_data(self):
        for counts in count_patterns(self.n):
            with self.subTest(counts=counts):
                case = Case(self.devices, counts, torch.bfloat16, seed=11 * sum(counts))
                calls = [self.runtime.prepare_all_gather_rank(r, case.inputs[r], case.outputs[r],
                                                              counts, case.streams[r])
                         for r in range(self.n)]
                for step in range(5):
                    case.refill(200 + step)
                    run_ranks(self.n, lambda r: calls[r]())
                    case.check(self)

    def test_graph_capture_and_replay(self):
        for counts, hidden in [([3 + r for r in range(self.n)], 64), ([100] * self.n, 4096)]:
            with self.subTest(counts=counts, hidden=hidden):
                case = Case(self.devices, counts, torch.bfloat16, batch=1, hidden=hidden)
                graphs = capture_ranks(self.devices, case.streams,
                                       lambda r: self.runtime.all_gather_rank(
                                           r, case.inputs[r], case.outputs[r], counts,
                                           case.streams[r]))
                for step in range(4):
                    case.refill(100 + step)
                    replay_ranks(self.devices, case.streams, graphs)
                    case.check(self)

    def test_missing_rank_times_out_and_reset_recovers(self):
        counts = [4] * self.n
        case = Case(self.devices, counts, torch.float16)
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
                        case = AllToAllCase(self.devices, counts, dtype, direction,
                                            seed=3 * sum(counts))
                        case.poison()
                        self.runtime.all_to_all(case.inputs, case.outputs, streams=case.streams,
                                                direction=direction)
                        case.check(self)

    def test_all_to_all_per_rank_threads(self):
        for direction in ltx.DIRECTIONS:
            for counts in count_patterns(self.n) + [[257 + 3 * r for r in range(self.n)]]:
                with self.subTest(direction=direction, counts=counts):
                    case = AllToAllCase(self.devices, counts, torch.bfloat16, direction,
                                        heads_per_rank=3, head_dim=64, seed=5 * sum(counts))
                    calls = [self.runtime.prepare_all_to_all_rank(
                        r, case.inputs[r], case.outputs[r], counts, case.streams[r],
                        direction=direction) for r in range(self.n)]
                    for step in range(3):
                        case.refill(300 + step)
                        run_ranks(self.n, lambda r: calls[r]())
                        case.check(self)
                    case.refill(400)
                    run_ranks(self.n, lambda r: self.runtime.all_to_all_rank(
                        r, case.inputs[r], case.outputs[r], counts, case.streams[r],
                        direction=direction))
                    case.check(self)

    def test_all_to_all_uneven_head_counts(self):
        splits = [[2 + r % 2 for r in range(self.n)], [0] + [3] * (self.n - 1)]
        for direction in ltx.DIRECTIONS:
            for head_counts in splits:
                with self.subTest(direction=direction, head_counts=head_counts):
                    counts = [3 + 2 * r for r in range(self.n)]
                    case = AllToAllCase(self.devices, counts, torch.bfloat16, direction,
                                        head_dim=40, seed=sum(head_counts),
                                        head_counts=head_counts)
                    case.poison()
                    self.runtime.all_to_all(case.inputs, case.outputs, streams=case.streams,
                                            direction=direction, head_counts=head_counts)
                    case.check(self)
                    case.refill(700)
                    run_ranks(self.n, lambda r: self.runtime.all_to_all_rank(
                        r, case.inputs[r], case.outputs[r], counts, case.streams[r],
                        direction=direction, head_counts=head_counts))
                    case.check(self)

    def test_all_to_all_protocols(self):
        counts = [3 + 2 * r for r in range(self.n)]
        head_counts = [2 + r % 2 for r in range(self.n)]
        for protocol in ("direct", "one_trip", "copy_engine"):
            for direction in ltx.DIRECTIONS:
                with self.subTest(protocol=protocol, direction=direction):
                    case = AllToAllCase(self.devices, counts, torch.bfloat16, direction,
                                        head_dim=40, seed=len(protocol), head_counts=head_counts)
                    case.poison()
                    if copy_engines_refused(self, protocol, lambda: self.runtime.all_to_all(
                            case.inputs, case.outputs, streams=case.streams,
                            direction=direction, head_counts=head_counts, protocol=protocol)):
                        continue
                    case.check(self)
                    case.refill(800)
                    run_ranks(self.n, lambda r: self.runtime.all_to_all_rank(
                        r, case.inputs[r], case.outputs[r], counts, case.streams[r],
                        direction=direction, head_counts=head_counts, protocol=protocol))
                    case.check(self)

    def test_all_to_all_round_trip_returns_the_input(self):
        for counts in count_patterns(self.n):
            with self.subTest(counts=counts):
                there = AllToAllCase(self.devices, counts, torch.float16, "seq_to_heads",
                                     seed=sum(counts))
                back = [torch.empty_like(t) for t in there.inputs]
                for tensor in back:
                    tensor.view(torch.uint8).fill_(POISON)
                there.poison()
                self.runtime.all_to_all(there.inputs, there.outputs, streams=there.streams)
                run_ranks(self.n, lambda r: self.runtime.all_to_all_rank(
                    r, there.outputs[r], back[r], counts, there.streams[r],
                    direction="heads_to_seq"))
                synchronize(self.devices)
                for r in range(self.n):
                    self.assertTrue(torch.equal(back[r].cpu().view(torch.uint8),
                                                there.inputs[r].cpu().view(torch.uint8)),
                                    f"rank {r}: seq -> heads -> seq changed the input")

    def test_all_to_all_and_all_gather_interleave(self):
        counts = [4 + r for r in range(self.n)]
        gather = Case(self.devices, counts, torch.bfloat16, seed=1)
        a2a = AllToAllCase(self.devices, counts, torch.bfloat16, "seq_to_heads", seed=2)
        for step in range(3):
            gather.refill(500 + step)
            a2a.refill(600 + step)
            run_ranks(self.n, lambda r: (
                self.runtime.all_gather_rank(r, gather.inputs[r], gather.outputs[r], counts,
                                             gather.streams[r]),
                self.runtime.all_to_all_rank(r, a2a.inputs[r], a2a.outputs[r], counts,
                                             gather.streams[r])))
            gather.check(self)
            a2a.check(self)

    def test_all_to_all_bad_shapes_raise_before_the_call(self):
        counts = [2] * self.n
        case = AllToAllCase(self.devices, counts, torch.bfloat16, "seq_to_heads")
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "do not match token counts"):
            self.runtime.all_to_all(case.inputs, case.outputs, counts=[3] * self.n)
        with self.assertRaises(ltx.InvalidArgumentError):
            self.runtime.all_to_all(case.inputs, case.outputs, direction="heads_to_seq")
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "direction"):
            self.runtime.prepare_all_to_all_rank(0, case.inputs[0], case.outputs[0], counts,
                                                 direction="up")
        self.runtime.status()  # Nothing reached the library: still usable.

    def check_listed_calls(self, cases, collective: str, counts, **options):
        """Runs the cases (Q, K and V: one shape, each its own data) as lists of tensors in one
        op of `collective` ("all_gather" or "all_to_all", with `options`), on case 0's streams:
        coordinated (the counts from the tensors), per rank and prepared from one thread per
        rank, with new data and poisoned outputs before each call; checks every case after
        each."""
        streams = cases[0].streams
        rank_call = getattr(self.runtime, f"{collective}_rank")
        prepare = getattr(self.runtime, f"prepare_{collective}_rank")
        for case in cases:
            case.poison()
        getattr(self.runtime, collective)(per_rank_lists(cases, "inputs"),
                                          per_rank_lists(cases, "outputs"), streams=streams,
                                          **options)
        for case in cases:
            case.check(self)
        arguments = [(r, per_rank_lists(cases, "inputs", r), per_rank_lists(cases, "outputs", r),
                      counts, streams[r]) for r in range(self.n)]
        prepared = [prepare(*arguments[r], **options) for r in range(self.n)]
        for step in range(3):
            for j, case in enumerate(cases):
                case.refill(900 + 10 * step + j)
            if step == 0:
                run_ranks(self.n, lambda r: rank_call(*arguments[r], **options))
            else:
                run_ranks(self.n, lambda r: prepared[r]())
            for case in cases:
                case.check(self)

    def test_qkv_lists_all_gather(self):
        for counts in count_patterns(self.n):
            with self.subTest(counts=counts):
                cases = [Case(self.devices, counts, torch.bfloat16, hidden=96,
                              seed=13 * sum(counts) + j) for j in range(3)]
                self.check_listed_calls(cases, "all_gather", counts)

    def test_qkv_lists_all_to_all(self):
        for direction in ltx.DIRECTIONS:
            for counts in count_patterns(self.n)[1:]:
                for head_counts in (None, [0] + [3] * (self.n - 1)):
                    with self.subTest(direction=direction, counts=counts,
                                      head_counts=head_counts):
                        cases = [AllToAllCase(self.devices, counts, torch.bfloat16, direction,
                                              head_dim=40, seed=17 * sum(counts) + j,
                                              head_counts=head_counts) for j in range(3)]
                        self.check_listed_calls(cases, "all_to_all", counts,
                                                direction=direction, head_counts=head_counts)

    def test_bad_tensors_raise_before_the_call(self):
        counts = [2] * self.n
        case = Case(self.devices, counts, torch.bfloat16)
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "is on cpu"):
            self.runtime.prepare_all_gather_rank(0, case.inputs[0].cpu(), case.outputs[0],
                                                 counts, case.streams[0])
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "not contiguous"):
            self.runtime.prepare_all_gather_rank(0, case.inputs[0].transpose(1, 2),
                                                 case.outputs[0], counts, case.streams[0])
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "torch.complex32"):
            self.runtime.prepare_all_gather_rank(0, case.inputs[0].to(torch.complex32),
                                                 case.outputs[0].to(torch.complex32), counts,
                                                 case.streams[0])
        self.runtime.status()  # Nothing reached the library: still usable.
        # The same refusal from a per-rank call stops the Runtime (its peers would wait for the
        # call), until reset().
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "not contiguous"):
            self.runtime.all_gather_rank(0, case.inputs[0].transpose(1, 2), case.outputs[0],
                                         counts, case.streams[0])
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "not contiguous"):
            self.runtime.status()
        with self.assertRaisesRegex(ltx.FailedPreconditionError, "not contiguous"):
            self.runtime.all_gather_rank(0, case.inputs[0], case.outputs[0], counts,
                                         case.streams[0])
        self.runtime.reset()
        self.runtime.status()


MODES = [("default", None), ("expandable_segments", "expandable_segments:True")]


def run_child() -> int:
    """Runs the tests in this process: 0 when they passed, SKIPPED_EXIT when every test was
    skipped, else 1."""
    result = unittest.main(verbosity=2, exit=False).result
    if not result.wasSuccessful():
        return 1
    skipped_all = result.skipped and len(result.skipped) >= result.testsRun
    return rank_layout.SKIPPED_EXIT if skipped_all else 0


def run_children(script: str, name: str) -> int:
    """Runs the tests of `script` (this file or one that calls main with its own) in one child
    process per allocator mode, reporting them as `name`: 0 when both passed, 1 when either
    failed, else the skip's status (rank_layout.skip_status)."""
    results = {}
    for mode, conf in MODES:
        env = dict(os.environ)
        env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
        if conf:
            env["PYTORCH_CUDA_ALLOC_CONF"] = conf
        print(f"=== allocator {mode}", flush=True)
        try:
            child = subprocess.run([sys.executable, os.path.abspath(script), "--child"],
                                   env=env, timeout=150, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)
            output, code = child.stdout, child.returncode
        except subprocess.TimeoutExpired as e:
            output, code = (e.stdout or b"").decode(errors="replace"), "timeout"
        print(output, flush=True)
        tail = [line for line in output.splitlines() if line.strip()][-1:] or [""]
        if code == rank_layout.SKIPPED_EXIT:
            reason = re.search(r"skipped '(.*)'", output)
            results[mode] = f"SKIPPED ({reason.group(1) if reason else tail[0]})"
        elif code == 0:
            results[mode] = f"PASS ({tail[0]})"
        elif isinstance(code, int) and code < 0:
            results[mode] = f"CRASH (signal {-code})"
        else:
            first = re.search(r"^\S*Error: .*$", output, re.M)
            cause = first.group(0)[:300] if first else "no exception printed"
            results[mode] = f"FAIL (exit {code}: {tail[0]}; first error: {cause})"
    summary = "; ".join(f"{mode}: {result}" for mode, result in results.items())
    print(f"{name}: {summary}", flush=True)
    if not all(result.startswith(("PASS", "SKIPPED")) for result in results.values()):
        return 1
    skipped = [mode for mode, result in results.items() if result.startswith("SKIPPED")]
    if skipped:
        return rank_layout.skip_status(name,
                                       f"allocator mode(s) {', '.join(skipped)} skipped")
    return 0


def main(script: str = __file__, name: str = "python gpu tests") -> int:
    """Runs the tests of `script` as the module comment says (in this process with --child),
    reporting them as `name`."""
    if "--child" in sys.argv:
        sys.argv.remove("--child")
        return run_child()
    if not announce_layout(name):
        return 1
    return run_children(script, name)


if __name__ == "__main__":
    sys.exit(main())
