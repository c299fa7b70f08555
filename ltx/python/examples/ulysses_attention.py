"""One Ulysses (sequence-parallel) attention block over ltx: one thread per rank re-shards its
query, key and value from tokens to heads in one all-to-all (a list of the three tensors per
rank), runs PyTorch's scaled_dot_product_attention over the whole sequence for its heads, and
re-shards the result back from heads to tokens.

    PYTHONPATH=<prefix>/lib/python python3 ltx/python/examples/ulysses_attention.py [--steps 3]
        [--devices 0,1] [--head-groups 2] [--tokens 96] [--heads 4] [--head-dim 64]
        [--wire fp8_e4m3] [--time [--nccl PATH]]

Rank r owns counts[r] = tokens + 64 r tokens (uneven) of q, k, v [1, counts[r], H, head_dim],
with H = heads x P over P ranks. Sequence -> heads gives it [1, sum(counts), heads, head_dim]:
its heads of the whole sequence, where scaled_dot_product_attention runs unchanged; heads ->
sequence brings its tokens of every head back.

--head-groups G (dividing --heads; default 1) splits the block into G groups: group g is heads
[g H / G, (g + 1) H / G) of the model, of which each rank takes heads / G in rank order. Each
group's exchanges are ops of their own, issued by every rank in the same order on the rank's
stream; the attention of group g runs on a second stream once its exchange is in (an event
orders them), overlapping the exchange of group g + 1, and the heads -> sequence exchange of
group g waits on an event for that attention. G = 1 gives rank r heads [r heads, (r + 1) heads).

--wire fp8_e4m3 moves every exchange's head vectors as e4m3 codes with one scale per head vector
(about half the bytes), decoded by the receiver; each rank's own tokens stay exact.

Each step checks the re-sharded q, k, v against slices of the whole tensors (byte-exact; with
FP8, a rank's own tokens byte-exact and the others within the bound e4m3 implies: 2^-4 of the
value and 2^-10 of its head vector's scale, plus the bf16 rounding), and the attention output
against attention computed on one GPU over the whole tensors (bf16 tolerance; with FP8 on the
wire, FP8_TOLERANCE). Prints PASS or FAIL; exit 0, 1, or 77 (skipped: no torch or no GPU; 1
under LTX_REQUIRE_RUN=1).

--time also prints the median time of the block (CUDA events on the rank's stream, after
warm-up; the slowest rank's median) for q, k, v in one op, for q, k, v in three separate ops
(one fixed cost each), both with one head group, and for one op per group with G groups; with
--wire fp8_e4m3, the one-op block on the native wire beside it; and where every rank has a GPU
of its own and NCCL loads (nccl_all_to_all.py, --nccl PATH), the same block with 1 and G head
groups as a server moves it with NCCL: q, k and v permuted into one contiguous piece per peer
and sent in one group of sends and receives, the output received per peer and permuted back.
Each of these blocks is checked as above. Give it sizes where the GPU work outweighs the Python
calls, e.g. --time --tokens 4096 --heads 8 --head-dim 128 --head-groups 4.

The ranks run on --devices (device ordinals in rank order; a GPU may host several ranks), by
default on the rank layout of ltx.rank_layout (LTX_TEST_DEVICES, LTX_TEST_RANKS, else every
visible GPU), at least two. Each rank has its own two streams.
"""

import argparse
import os
import statistics
import sys
import threading

import ltx
from ltx import rank_layout
from nccl_all_to_all import NcclComms, NcclError

# Ranks may share a GPU here, and wait for each other inside their kernels: set before torch
# starts CUDA what kernels/PROTOCOL.md ("Ranks that share a GPU") asks of such a process. Under
# lazy module loading the first launch of a kernel waits until the GPU is idle, which it is not
# while a co-located rank waits in a collective; and the ranks' streams need their own hardware
# queues.
os.environ.setdefault("CUDA_MODULE_LOADING", "EAGER")
os.environ.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "32")

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    sys.exit(rank_layout.skip_status("ulysses_attention", "no torch"))

QKV = range(3)
TOLERANCE = 2e-2  # Max abs error of the bf16 attention output against the one-GPU reference.
# The same with FP8 on the wire: q, k, v and the output each carry up to 2^-4 relative error.
FP8_TOLERANCE = 0.25
WARMUP, TIMED = 5, 20  # Blocks before timing, and blocks timed, under --time.


def attention(q, k, v):
    """Attention over dimension 1 (tokens) of [batch, tokens, heads, head_dim] tensors."""
    out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
    return out.transpose(1, 2)


def empty(tokens, heads, head_dim):
    return torch.empty(1, tokens, heads, head_dim, dtype=torch.bfloat16, device="cuda")


class Block:
    """Rank `rank`'s attention block in `groups` head groups, over tensors allocated once:
    per group, q, k, v by tokens -> by heads (in one op, or in three when `separate`),
    attention, output by heads -> by tokens. Calling it issues one block; `streams` are the
    rank's stream (the exchanges) and a second one (the attention). With `nccl` (NcclComms),
    NCCL moves them instead, as a server does without ltx: q, k and v permuted into one
    contiguous piece per peer and sent in one group, the output received per peer and permuted
    back."""

    def __init__(self, runtime, rank, counts, heads, head_dim, groups, separate, wire, streams,
                 nccl=None):
        self.rank, self.groups, self.wire = rank, groups, wire
        self.comm, self.compute = streams
        self.mine = heads // groups                   # The rank's heads in each group.
        self.width = self.mine * runtime.world_size   # The model's heads in each group.
        tokens, total = counts[rank], sum(counts)
        self.inputs = [[empty(tokens, self.width, head_dim) for _ in QKV] for _ in range(groups)]
        self.by_heads = [[empty(total, self.mine, head_dim) for _ in QKV] for _ in range(groups)]
        self.attended = [empty(total, self.mine, head_dim) for _ in range(groups)]
        self.outputs = [empty(tokens, self.width, head_dim) for _ in range(groups)]

        self.received = [torch.cuda.Event() for _ in range(groups)]  # Group g's q, k, v in.
        self.computed = [torch.cuda.Event() for _ in range(groups)]  # Its attention done.
        if nccl is not None:
            self.to_heads, self.to_tokens = self.nccl_calls(nccl, counts, head_dim)
            return

        def exchange(src, dst, direction="seq_to_heads"):
            return runtime.prepare_all_to_all_rank(rank, src, dst, counts, self.comm,
                                                   direction=direction, wire=wire)
        # Per group, the calls that move q, k, v: one call of three tensors, or three calls.
        self.to_heads = [[exchange(s, d) for s, d in zip(src, dst)] if separate
                         else [exchange(src, dst)]
                         for src, dst in zip(self.inputs, self.by_heads)]
        self.to_tokens = [exchange(src, dst, "heads_to_seq")
                          for src, dst in zip(self.attended, self.outputs)]

    def nccl_calls(self, nccl, counts, head_dim):
        """(to_heads, to_tokens) per group over NCCL: the permutes and one group of sends and
        receives each way, on the rank's stream."""
        ranks, rank, tokens = len(counts), self.rank, counts[self.rank]
        first = [sum(counts[:r]) for r in range(ranks)]   # Each rank's first token.

        def pieces():  # Per peer, this rank's tokens of the peer's heads.
            return torch.empty(ranks, tokens, self.mine, head_dim, dtype=torch.bfloat16,
                               device="cuda")
        to_heads, to_tokens = [], []
        handle = self.comm.cuda_stream
        for g in range(self.groups):
            packed, staging = [pieces() for _ in QKV], pieces()
            # Every piece's pointer and size, worked out once: the calls then cost a server's
            # NCCL calls, not the Python around them.
            heads_pieces = nccl.pieces(
                (peer, packed[i][peer],
                 self.by_heads[g][i][0][first[peer]:first[peer] + counts[peer]])
                for i in QKV for peer in range(ranks))
            tokens_pieces = nccl.pieces(
                (peer, self.attended[g][0][first[peer]:first[peer] + counts[peer]], staging[peer])
                for peer in range(ranks))

            def heads_call(g=g, packed=packed, heads_pieces=heads_pieces):
                with torch.cuda.stream(self.comm):
                    for i in QKV:
                        by_peer = self.inputs[g][i][0].view(tokens, ranks, self.mine, head_dim)
                        packed[i].copy_(by_peer.transpose(0, 1))     # the permute
                    nccl.exchange(rank, heads_pieces, handle)

            def tokens_call(g=g, staging=staging, tokens_pieces=tokens_pieces):
                with torch.cuda.stream(self.comm):
                    nccl.exchange(rank, tokens_pieces, handle)
                    by_peer = self.outputs[g][0].view(tokens, ranks, self.mine, head_dim)
                    by_peer.copy_(staging.transpose(0, 1))           # the permute back
            to_heads.append([heads_call])
            to_tokens.append(tokens_call)
        return to_heads, to_tokens

    def __call__(self):
        for calls, received in zip(self.to_heads, self.received):     # sequence -> heads
            for call in calls:
                call()
            received.record(self.comm)
        # Group g's attention waits for its own exchange only: it runs while g + 1's moves.
        with torch.cuda.stream(self.compute):                         # the rank's heads
            for g in range(self.groups):
                self.compute.wait_event(self.received[g])
                self.attended[g].copy_(attention(*self.by_heads[g]))
                self.computed[g].record(self.compute)
        for call, computed in zip(self.to_tokens, self.computed):     # heads -> sequence
            self.comm.wait_event(computed)
            call()

    def load(self, full, rows):
        """Fills the inputs with this rank's `rows` of the whole q, k, v `full` (each group its
        heads), and poisons every output."""
        for g, inputs in enumerate(self.inputs):
            for input, whole in zip(inputs, full):
                input.copy_(whole[:, rows, g * self.width:(g + 1) * self.width])
        for poisoned in [t for group in self.by_heads for t in group] + self.outputs:
            poisoned.fill_(float("nan"))

    def resharded(self, full, rows):
        """Whether every group's q, k, v by heads are this rank's heads of `full`: bit for bit
        on the native wire; with FP8, the rank's own tokens (`rows`) bit for bit and the others
        within the bound e4m3 implies."""
        ok = True
        for g, splits in enumerate(self.by_heads):
            start = g * self.width + self.rank * self.mine
            for split, whole in zip(splits, full):
                expected = whole[:, :, start:start + self.mine]
                if self.wire == "native":
                    ok &= torch.equal(split, expected)
                    continue
                ok &= torch.equal(split[:, rows], expected[:, rows])
                x = expected.float()
                scale = x.abs().amax(dim=-1, keepdim=True) / 448  # One per head vector.
                bound = x.abs() * (2 ** -4 + 2 ** -8) + scale * 2 ** -10
                ok &= bool(((split.float() - x).abs() <= bound).all())
        return ok

    def output(self):
        """The attention output of this rank's tokens, every head in the model's order."""
        return torch.cat(self.outputs, dim=2)


def median_ms(block, stream):
    """Median time of TIMED blocks after WARMUP, by CUDA events on the rank's stream (which
    waits for the attention stream inside each block)."""
    for _ in range(WARMUP):
        block()
    marks = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
             for _ in range(TIMED)]
    for start, end in marks:
        start.record(stream)
        block()
        end.record(stream)
    stream.synchronize()
    return statistics.median(start.elapsed_time(end) for start, end in marks)


def variants(args, nccl=False):
    """(name, head groups, q k v in three ops, wire, on NCCL) of the blocks to run: the chosen
    one, or under --time the comparison (with `nccl`, NCCL's blocks beside ltx's)."""
    def name(groups, separate, wire, on_nccl=False):
        if on_nccl:
            ops = "NCCL send/recv + permutes, q, k, v in one group"
        else:
            ops = "q, k, v in three ops" if separate else "q, k, v in one op"
        return (f"{ops}, {groups} head group{'s' if groups > 1 else ''}"
                f"{', FP8 wire' if wire != 'native' else ''}")
    chosen = [(name(args.head_groups, False, args.wire), args.head_groups, False, args.wire,
               False)]
    if not args.time:
        return chosen
    native = [(name(1, False, "native"), 1, False, "native", False),
              (name(1, True, "native"), 1, True, "native", False)]
    fp8 = ([(name(1, False, args.wire), 1, False, args.wire, False)]
           if args.wire != "native" else [])
    grouped = chosen if args.head_groups > 1 else []
    on_nccl = ([(name(groups, False, "native", True), groups, False, "native", True)
                for groups in sorted({1, args.head_groups})] if nccl else [])
    return native + fp8 + grouped + on_nccl


def rank_loop(runtime, rank, counts, args, barrier, results, nccl=None):
    """Rank `rank`'s thread: per variant, `args.steps` checked blocks, then the timing;
    appends (re-shard as expected, max error, median ms or None) per variant to
    results[rank]. `nccl` (NcclComms or None) moves the NCCL variants."""
    torch.cuda.set_device(runtime.devices[rank])
    streams = torch.cuda.Stream(), torch.cuda.Stream()  # Exchanges; attention.
    total, start = sum(counts), sum(counts[:rank])
    rows = slice(start, start + counts[rank])
    heads = args.heads * runtime.world_size

    def step_inputs(step):
        seed = torch.Generator(device="cuda").manual_seed(step)  # Same on every rank.
        return [torch.randn(1, total, heads, args.head_dim, device="cuda",
                            generator=seed).to(torch.bfloat16) for _ in QKV]

    def error(block, full):
        expected = attention(*full)[:, rows]
        return (block.output().float() - expected.float()).abs().max()

    with torch.cuda.stream(streams[0]):
        # Before any collective, on every rank: the blocks' buffers, every attention shape, and
        # one step's inputs and check. The first call of a shape sets up its kernels and
        # workspace, and a first allocation grows PyTorch's cache from the device; either may
        # wait for the whole GPU, or hold this rank's next launch behind a co-located rank's
        # waiting exchange (kernels/PROTOCOL.md, "Ranks that share a GPU"). Later steps reuse
        # the cache.
        chosen = variants(args, nccl is not None)
        blocks = [Block(runtime, rank, counts, args.heads, args.head_dim, groups, separate, wire,
                        streams, nccl if on_nccl else None)
                  for _, groups, separate, wire, on_nccl in chosen]
        for width in sorted({heads, *(args.heads // groups for _, groups, _, _, _ in chosen)}):
            attention(*[empty(total, width, args.head_dim).zero_()] * 3)
        for block in blocks:
            error(block, step_inputs(0))
        streams[0].synchronize()
        barrier.wait()
        for block in blocks:
            exact, worst = True, 0.0
            for step in range(args.steps):
                full = step_inputs(step)
                block.load(full, rows)
                block()
                exact &= block.resharded(full, rows)
                e = error(block, full).item()
                worst = max(worst, e if e == e else float("inf"))  # NaN: an unwritten output.
            ms = median_ms(block, streams[0]) if args.time else None
            streams[0].synchronize()
            results[rank].append((exact, worst, ms))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--devices", help="device ordinals in rank order, e.g. 0,0,1 "
                                          "(default: the rank layout)")
    parser.add_argument("--head-groups", type=int, default=1,
                        help="head groups whose exchanges overlap the attention (default 1)")
    parser.add_argument("--tokens", type=int, default=96, help="rank 0's tokens (rank r: +64 r)")
    parser.add_argument("--heads", type=int, default=4, help="heads per rank")
    parser.add_argument("--head-dim", type=int, default=64)
    parser.add_argument("--wire", choices=sorted(ltx.WIRES), default="native",
                        help="how the exchanges move head vectors (default native)")
    parser.add_argument("--time", action="store_true",
                        help="time one op against three, 1 head group against G, the FP8 wire "
                             "against the native one, and NCCL's blocks beside ltx's")
    parser.add_argument("--nccl", default=None,
                        help="the NCCL library for --time (default: libnccl.so.2, then "
                             "PyTorch's); NCCL needs one GPU per rank")
    args = parser.parse_args()
    if min(args.steps, args.head_groups, args.tokens, args.heads, args.head_dim) < 1:
        parser.error("--steps, --head-groups, --tokens, --heads and --head-dim must be >= 1")
    if args.heads % args.head_groups:
        parser.error(f"--head-groups {args.head_groups} does not divide --heads {args.heads}")
    if args.wire != "native" and args.head_dim < 8:
        parser.error("--wire fp8_e4m3 needs --head-dim >= 8")
    devices = rank_layout.devices_for_run(torch.cuda.device_count(), needed=2, flag=args.devices)
    if not devices:
        return rank_layout.skip_status("ulysses_attention", "no GPU visible")
    if len(set(devices)) < len(devices):
        # cuDNN's attention (PyTorch's first choice on Hopper) can hold the calling thread until
        # the GPU's other work is done: here a co-located rank's exchange, which waits for this
        # rank's next one (kernels/PROTOCOL.md, "Ranks that share a GPU"). Where ranks share a
        # GPU, attention runs on PyTorch's other kernels.
        torch.backends.cuda.enable_cudnn_sdp(False)
    nccl, no_nccl = None, "not asked for (--time)"
    if args.time:
        try:
            nccl = NcclComms(devices, args.nccl)
        except NcclError as e:
            no_nccl = str(e)
    try:
        with ltx.Runtime(devices=devices, timeout=30.0) as runtime:
            n = runtime.world_size
            counts = [args.tokens + 64 * r for r in range(n)]
            results, errors = [[] for _ in range(n)], []
            barrier = threading.Barrier(n, timeout=120)

            def body(rank):
                try:
                    rank_loop(runtime, rank, counts, args, barrier, results, nccl)
                except Exception as e:  # Reported below.
                    # The other ranks then time out in ltx's calls; NCCL's wait for ever, so
                    # its communicators end at once.
                    barrier.abort()
                    if nccl is not None:
                        nccl.abort()
                    errors.append(f"rank {rank}: {type(e).__name__}: {e}")

            threads = [threading.Thread(target=body, args=(r,)) for r in range(n)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            try:  # An op that failed on the device after its rank's last call.
                runtime.synchronize()
            except ltx.Error as e:
                errors.append(f"synchronize: {type(e).__name__}: {e}")
    finally:
        if nccl is not None:
            nccl.close()
    for line in errors:
        print(line)
    print(f"ulysses_attention: {n} ranks on GPUs {devices}, tokens {counts}, "
          f"{args.heads * n} heads x {args.head_dim}, {args.steps} steps; NCCL: "
          f"{'version %d' % nccl.version if nccl is not None else no_nccl}")
    ok = not errors
    for i, (name, _, _, wire, _) in enumerate(variants(args, nccl is not None)):
        done = [(rank, r[i]) for rank, r in enumerate(results) if len(r) > i]
        tolerance = TOLERANCE if wire == "native" else FP8_TOLERANCE
        ok &= len(done) == n and all(exact and worst <= tolerance for _, (exact, worst, _) in done)
        checks = ", ".join(f"rank {rank}: {'expected' if exact else 'WRONG'} re-shard, "
                           f"max error {worst:.3g}" for rank, (exact, worst, _) in done)
        timing = (f"; median block {max(ms for _, (_, _, ms) in done):.3f} ms"
                  if args.time and done else "")
        print(f"  {name}: {checks}{timing}")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
