"""A PyTorch server loop over ltx: one thread per rank runs compute -> all-gather -> compute,
first eagerly, then captured once into a CUDA graph with torch.cuda.graph and replayed.

    PYTHONPATH=<prefix>/lib/python python3 ltx/python/examples/torch_loop.py [--steps 20]
        [--devices 0,1]

The ranks run on --devices (device ordinals in rank order; a GPU may host several ranks), by
default on the rank layout of ltx.rank_layout (LTX_TEST_DEVICES, LTX_TEST_RANKS, else every
visible GPU), at least two. Each rank has its own stream.

Each rank owns a shard of the tokens (uneven counts): it projects its shard, gathers every
rank's projected shard with all_gather_rank, and reduces the whole sequence. Every step's result
is checked against the same math done with torch.cat; the script prints PASS or FAIL.
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
except ImportError:
    sys.exit(rank_layout.skip_status("torch_loop", "no torch"))

HIDDEN = 1024


def capture(rank, step, stream, barrier):
    """Captures `step` into a CUDA graph, one rank at a time: torch.cuda.graph synchronises and
    empties the allocator's cache on entry, which must not wait on another rank's collective
    or run beside another rank's capture."""
    stream.synchronize()
    graph = torch.cuda.CUDAGraph()
    for turn in range(barrier.parties):
        barrier.wait()
        if turn == rank:
            with torch.cuda.graph(graph, stream=stream, capture_error_mode="thread_local"):
                step()
    barrier.wait()
    return graph


def rank_loop(runtime, rank, counts, steps, barrier, results):
    """Rank `rank`'s thread: eager steps, then graph replays; records the max error."""
    device = runtime.devices[rank]
    torch.cuda.set_device(device)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):  # Made on the stream that uses them.
        generator = torch.Generator(device="cuda").manual_seed(1234)  # Same weights everywhere.
        weight = torch.randn(HIDDEN, HIDDEN, device="cuda", generator=generator) / HIDDEN ** 0.5
        shard = torch.empty(counts[rank], HIDDEN, device="cuda")
        projected = torch.empty(counts[rank], HIDDEN, dtype=torch.bfloat16, device="cuda")
        gathered = torch.empty(sum(counts), HIDDEN, dtype=torch.bfloat16, device="cuda")
        pooled = torch.empty(HIDDEN, device="cuda")

    def step():
        projected.copy_(shard @ weight)                                   # compute
        runtime.all_gather_rank(rank, projected, gathered, counts, stream)  # all-gather
        pooled.copy_(gathered.float().sum(dim=0))                         # compute

    worst = 0.0
    graph = None
    with torch.cuda.stream(stream):
        # The compute alone once on every rank before any collective: a stream's first matmul
        # sets up cuBLAS and allocates, which may wait for the whole GPU, and on a GPU that
        # ranks share, a co-located rank may then be waiting inside a collective for this one.
        pooled.copy_((shard @ weight).sum(dim=0))
        stream.synchronize()
        barrier.wait()
        for i in range(steps):
            if i == steps // 2:
                graph = capture(rank, step, stream, barrier)
            seed = torch.Generator(device="cuda").manual_seed(i)  # Same on every rank.
            full = torch.randn(sum(counts), HIDDEN, device="cuda", generator=seed)
            bounds = [sum(counts[:r]) for r in range(len(counts) + 1)]
            shard.copy_(full[bounds[rank]:bounds[rank + 1]])
            if graph is None:
                step()
            else:
                graph.replay()
            expected = torch.cat([(full[bounds[r]:bounds[r + 1]] @ weight).to(torch.bfloat16)
                                  for r in range(len(counts))]).float().sum(dim=0)
            error = (pooled - expected).abs().max().item()
            worst = max(worst, error if error == error else float("inf"))  # NaN: unwritten.
        stream.synchronize()
    results[rank] = worst


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--devices", help="device ordinals in rank order, e.g. 0,0,1 "
                                          "(default: the rank layout)")
    args = parser.parse_args()
    if args.steps < 1:
        parser.error(f"--steps {args.steps}: needs at least 1")
    devices = rank_layout.devices_for_run(torch.cuda.device_count(), needed=2, flag=args.devices)
    if not devices:
        return rank_layout.skip_status("torch_loop", "no GPU visible")
    with ltx.Runtime(devices=devices) as runtime:
        n = runtime.world_size
        counts = [64 + 32 * r for r in range(n)]
        results = [None] * n
        barrier = threading.Barrier(n, timeout=60)
        threads = [threading.Thread(target=rank_loop,
                                    args=(runtime, r, counts, args.steps, barrier, results))
                   for r in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        runtime.synchronize()
    ok = all(r is not None and r < 1e-3 for r in results)
    print(f"torch_loop: {n} ranks on GPUs {devices}, counts {counts}, {args.steps} steps "
          f"(graph from step {args.steps // 2}): max error {results} -> {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
