"""Per-call cost of ltx.Runtime.all_gather_rank from Python, beside the C++ tool's figures:

    PYTHONPATH=<prefix>/lib/python python3 tests/python/benchmark.py [--cpp PATH/ltx_allgather]
        [--devices 0,1]

The ranks are those of --devices, else of the rank layout (ltx.rank_layout: LTX_TEST_DEVICES,
LTX_TEST_RANKS, else every visible GPU), at least two. One thread per rank calls all_gather_rank
on the rank's own stream (bf16, hidden 4096, an even split). For each size per rank: the host
time of one call (median over the calls of every rank), and the device time per call (CUDA
events around `iters` calls, median of `windows` windows, slowest rank), as
`ltx_allgather --bench --style=rank` measures it. A last row per size has one thread
issue every rank's prepared calls in turn (kernel protocols never wait on the host), which
shows what the GIL hand-off between rank threads costs. With --cpp it then runs that tool on
the same sizes.
"""

import argparse
import statistics
import subprocess
import sys
import threading
import time

import ltx
from ltx import _library, rank_layout

try:
    import torch
except ImportError:
    sys.exit(rank_layout.skip_status("benchmark", "no torch"))

from gpu_test import rank_streams  # noqa: E402

HIDDEN = 4096
ROW_BYTES = HIDDEN * 2


def time_rank(runtime, rank, counts, args, barrier, host, device, prepared, stream):
    """Rank `rank`'s thread, on `stream`: warm-up, then timed windows. Appends the host seconds
    of every call to `host` and the device microseconds per call of each window to
    device[rank]. With `prepared`, each call is a RankCall from prepare_all_gather_rank (checked
    once), else a full all_gather_rank."""
    torch.cuda.set_device(runtime.devices[rank])
    src = torch.randn(1, counts[rank], HIDDEN, device="cuda").to(torch.bfloat16)
    dst = torch.empty(1, sum(counts), HIDDEN, dtype=torch.bfloat16, device="cuda")
    stream.wait_stream(torch.cuda.current_stream())  # src was filled on the default stream.
    if prepared:
        call = runtime.prepare_all_gather_rank(rank, src, dst, counts, stream)
    else:
        def call():
            runtime.all_gather_rank(rank, src, dst, counts, stream)
    # Every rank's setup (its allocations, its first kernels) before any collective: on a GPU
    # that ranks share, a co-located rank may otherwise be waiting inside one already.
    barrier.wait()
    for _ in range(args.warmup):
        call()
    stream.synchronize()
    for _ in range(args.windows):
        barrier.wait()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record(stream)
        for _ in range(args.iters):
            t0 = time.perf_counter()
            call()
            host.append(time.perf_counter() - t0)
        end.record(stream)
        end.synchronize()
        device[rank].append(start.elapsed_time(end) * 1e3 / args.iters)


def measure_one_thread(runtime, per_rank_bytes, args, streams):
    """(host us per call, device us per call) with one thread issuing every rank's prepared
    call in turn, rank r's on streams[r]."""
    n = runtime.world_size
    counts = [per_rank_bytes // ROW_BYTES] * n
    calls = []
    for rank, stream in enumerate(streams):
        device = runtime.devices[rank]
        with torch.cuda.device(device):
            src = torch.randn(1, counts[rank], HIDDEN, device="cuda").to(torch.bfloat16)
            dst = torch.empty(1, sum(counts), HIDDEN, dtype=torch.bfloat16, device="cuda")
            stream.wait_stream(torch.cuda.current_stream())  # src was filled there.
        calls.append(runtime.prepare_all_gather_rank(rank, src, dst, counts, stream))
    for _ in range(args.warmup):
        for call in calls:
            call()
    host, device_us = [], []
    for _ in range(args.windows):
        starts, ends = [], []
        for stream in streams:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record(stream)
            starts.append(start)
            ends.append(end)
        for _ in range(args.iters):
            for call in calls:
                t0 = time.perf_counter()
                call()
                host.append(time.perf_counter() - t0)
        for stream, end in zip(streams, ends):
            end.record(stream)
        for end in ends:
            end.synchronize()
        device_us.append(max(s.elapsed_time(e) for s, e in zip(starts, ends)) * 1e3 / args.iters)
    runtime.status()
    return statistics.median(host) * 1e6, statistics.median(device_us)


def measure(runtime, per_rank_bytes, args, prepared, streams):
    """(host us per call, device us per call) for `per_rank_bytes` per rank, rank r's calls on
    streams[r]: the median host time of all calls, and the median over windows of the slowest
    GPU's time per call."""
    n = runtime.world_size
    counts = [per_rank_bytes // ROW_BYTES] * n
    barrier = threading.Barrier(n, timeout=120)
    host, device = [], [[] for _ in range(n)]
    threads = [threading.Thread(target=time_rank,
                                args=(runtime, r, counts, args, barrier, host, device, prepared,
                                      streams[r]))
               for r in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    runtime.status()
    slowest = [max(per_rank[w] for per_rank in device) for w in range(args.windows)]
    return statistics.median(host) * 1e6, statistics.median(slowest)


def ctypes_floor(repeats=20000):
    """Host time of a ctypes call that does nothing (ltx_version), in microseconds."""
    version = _library.lib().ltx_version
    t0 = time.perf_counter()
    for _ in range(repeats):
        version()
    return (time.perf_counter() - t0) / repeats * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpp", help="path of ltx_allgather, to run on the same sizes")
    parser.add_argument("--sizes", default="8192,32768,131072", help="bytes per rank")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--iters", type=int, default=100)
    parser.add_argument("--windows", type=int, default=5)
    parser.add_argument("--devices", help="device ordinals in rank order, e.g. 0,0,1 "
                                          "(default: the rank layout)")
    args = parser.parse_args()
    devices = rank_layout.devices_for_run(torch.cuda.device_count(), needed=2, flag=args.devices)
    if not devices:
        return rank_layout.skip_status("benchmark", "no GPU visible")
    sizes = [int(s) for s in args.sizes.split(",")]
    # One stream per rank for the whole run (gpu_test.rank_streams says why).
    streams = rank_streams(devices)
    with ltx.Runtime(devices=devices) as runtime:
        print(f"python all_gather_rank, {runtime.world_size} ranks on GPUs {devices}, bf16, "
              f"hidden {HIDDEN}; empty ctypes call: {ctypes_floor():.2f} us")
        print(f"{'per rank':>10} {'call':>9} {'host us/call':>13} {'device us/call':>15}")
        for size in sizes:
            for prepared in (False, True):
                host_us, device_us = measure(runtime, size, args, prepared, streams)
                style = "prepared" if prepared else "full"
                print(f"{size // 1024:>8} KB {style:>9} {host_us:>13.2f} {device_us:>15.2f}",
                      flush=True)
            host_us, device_us = measure_one_thread(runtime, size, args, streams)
            print(f"{size // 1024:>8} KB {'1 thread':>9} {host_us:>13.2f} {device_us:>15.2f}",
                  flush=True)
    if args.cpp:
        n = len(devices)
        command = [args.cpp, "--bench", "--style=rank", f"--devices={','.join(map(str, devices))}",
                   f"-b={sizes[0] * n // 1024}K",
                   f"-e={sizes[-1] * n // 1024}K", "-f=4", f"--iters={args.iters}",
                   f"--windows={args.windows}"]
        print("+ " + " ".join(command), flush=True)
        return subprocess.run(command).returncode
    return 0


if __name__ == "__main__":
    sys.exit(main())
