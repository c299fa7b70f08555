"""README's Python example: two ranks gather their tokens (on GPUs 0 and 1, or both on GPU 0),
and every output is checked. PYTHONPATH=<prefix>/lib/python python3 quick_start.py"""
import os
import sys

# Ranks may share a GPU, which wants kernels loaded eagerly (ltx/docs/shared_gpus.md).
os.environ.setdefault("CUDA_MODULE_LOADING", "EAGER")
import torch  # noqa: E402
import ltx  # noqa: E402

devices = [0, 1] if torch.cuda.device_count() > 1 else [0, 0]   # rank order
counts = [100, 80]                                               # tokens per rank
inputs = [torch.full((1, n, 4096), r + 1, dtype=torch.bfloat16, device=f"cuda:{d}")
          for r, (n, d) in enumerate(zip(counts, devices))]
outputs = [torch.empty(1, sum(counts), 4096, dtype=torch.bfloat16, device=f"cuda:{d}")
           for d in devices]
streams = [torch.cuda.Stream(device=d) for d in devices]         # one per rank
for d in set(devices):
    torch.cuda.synchronize(d)                                    # the inputs are ready

with ltx.Runtime(devices=devices, timeout=10.0) as runtime:
    runtime.all_gather(inputs, outputs, streams=streams)        # coordinated; waits
    # Per rank, from each GPU's own thread (torch.cuda.graph can capture it):
    #   runtime.all_gather_rank(rank, inputs[rank], outputs[rank], counts, streams[rank])
expected = torch.cat([torch.full((1, n, 4096), r + 1.0) for r, n in enumerate(counts)], dim=1)
ok = all(torch.equal(out.float().cpu(), expected) for out in outputs)
print(f"gathered on GPUs {devices}: {'PASS' if ok else 'FAIL'}")
sys.exit(0 if ok else 1)
