"""One Ulysses (sequence-parallel) attention step over ltx: one thread per rank re-shards its
query, key and value from tokens to heads with all_to_all_rank, runs attention over the whole
sequence for its heads, and re-shards the result back from heads to tokens.

    PYTHONPATH=<prefix>/lib/python python3 ltx/python/examples/ulysses_attention.py [--steps 3]
        [--devices 0,1]

Rank r owns counts[r] tokens (uneven) of q, k, v [1, counts[r], heads, head_dim]. Sequence ->
heads gives it [1, sum(counts), heads / P, head_dim]: heads [r * heads / P, (r + 1) * heads / P)
of the whole sequence, where scaled_dot_product_attention runs unchanged; heads -> sequence
brings its tokens of every head back. Each step checks the re-sharded q, k, v byte-exact
against slices of the whole tensors, and the attention output against attention computed on one
GPU over the whole tensors (bf16 tolerance). Prints PASS or FAIL; exit 0, 1, or 77 (skipped:
no torch or no GPU; 1 under LTX_REQUIRE_RUN=1).

The ranks run on --devices (device ordinals in rank order; a GPU may host several ranks), by
default on the rank layout of ltx.rank_layout (LTX_TEST_DEVICES, LTX_TEST_RANKS, else every
visible GPU), at least two. Each rank has its own stream.
"""

import argparse
import os
import sys
import threading

import ltx
from ltx import rank_layout

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

HEADS_PER_RANK = 4
HEAD_DIM = 64
TOLERANCE = 2e-2  # Max abs error of the bf16 attention output against the one-GPU reference.


def attention(q, k, v):
    """Attention over dimension 1 (tokens) of [batch, tokens, heads, head_dim] tensors."""
    out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
    return out.transpose(1, 2)


def rank_loop(runtime, rank, counts, steps, results):
    """Rank `rank`'s thread: `steps` attention steps; records (byte-exact, max error)."""
    torch.cuda.set_device(runtime.devices[rank])
    n, total = runtime.world_size, sum(counts)
    heads, start = HEADS_PER_RANK * n, sum(counts[:rank])
    mine = slice(rank * HEADS_PER_RANK, (rank + 1) * HEADS_PER_RANK)
    stream = torch.cuda.Stream()

    def empty(tokens, width):
        return torch.empty(1, tokens, width, HEAD_DIM, dtype=torch.bfloat16, device="cuda")

    shards = [empty(counts[rank], heads) for _ in range(3)]           # q, k, v by tokens
    by_heads = [empty(total, HEADS_PER_RANK) for _ in range(3)]       # q, k, v by heads
    attended = empty(total, HEADS_PER_RANK)
    output = empty(counts[rank], heads)
    to_heads = [runtime.prepare_all_to_all_rank(rank, shard, split, counts, stream)
                for shard, split in zip(shards, by_heads)]
    to_tokens = runtime.prepare_all_to_all_rank(rank, attended, output, counts, stream,
                                                direction="heads_to_seq")
    exact, worst = True, 0.0
    with torch.cuda.stream(stream):
        for step in range(steps):
            seed = torch.Generator(device="cuda").manual_seed(step)  # Same on every rank.
            full = [torch.randn(1, total, heads, HEAD_DIM, device="cuda", generator=seed)
                    .to(torch.bfloat16) for _ in range(3)]
            for shard, whole in zip(shards, full):
                shard.copy_(whole[:, start:start + counts[rank]])
            for poisoned in by_heads + [output]:
                poisoned.fill_(float("nan"))
            for call in to_heads:                                     # sequence -> heads
                call()
            attended.copy_(attention(*by_heads))                      # this rank's heads
            to_tokens()                                               # heads -> sequence
            for split, whole in zip(by_heads, full):
                exact &= torch.equal(split, whole[:, :, mine].contiguous())
            expected = attention(*full)[:, start:start + counts[rank]]
            worst = max(worst, (output.float() - expected.float()).abs().max().item())
        stream.synchronize()
    results[rank] = (exact, worst)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--devices", help="device ordinals in rank order, e.g. 0,0,1 "
                                          "(default: the rank layout)")
    args = parser.parse_args()
    devices = rank_layout.devices_for_run(torch.cuda.device_count(), needed=2, flag=args.devices)
    if not devices:
        return rank_layout.skip_status("ulysses_attention", "no GPU visible")
    with ltx.Runtime(devices=devices, timeout=30.0) as runtime:
        n = runtime.world_size
        counts = [96 + 64 * r for r in range(n)]
        results, errors = [None] * n, []

        def body(rank):
            try:
                rank_loop(runtime, rank, counts, args.steps, results)
            except Exception as e:  # Reported below; the other ranks then time out.
                errors.append(f"rank {rank}: {type(e).__name__}: {e}")

        threads = [threading.Thread(target=body, args=(r,)) for r in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    for line in errors:
        print(line)
    ok = not errors and all(r is not None and r[0] and r[1] <= TOLERANCE for r in results)
    summary = ", ".join(
        f"rank {r}: {'exact' if result[0] else 'NOT exact'} re-shard, max error {result[1]:.3g}"
        for r, result in enumerate(results) if result is not None)
    print(f"ulysses_attention: {n} ranks on GPUs {devices}, tokens {counts}, "
          f"{HEADS_PER_RANK * n} heads x {HEAD_DIM}, {args.steps} steps; {summary}")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
