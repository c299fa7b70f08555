#!/bin/bash
# run_gpu.sh of the Python bundle (tools/python_bundle.sh): runs the Python package's tests,
# the PyTorch example and the Python benchmark on a GPU machine, then one summary line:
#   python bundle: gpu_test <status>, torch_loop <status>, benchmark <status>
cd "$(dirname "$0")" || exit 1
export PYTHONPATH="${PWD}/prefix/lib/python"
export NCCL_NVLS_ENABLE=0
python3 -c 'import torch; print("torch", torch.__version__, "GPUs:", torch.cuda.device_count())'
ldd prefix/lib/libltx.so | grep -E 'not found|absl_base' || true

status() { if [[ $1 -eq 0 ]]; then echo PASS; else echo "FAIL(exit $1)"; fi; }
echo "=== cpu_test"
timeout 120 python3 cpu_test.py 2>&1 | tail -3
echo "=== gpu_test (default and expandable_segments allocators)"
timeout 1000 python3 gpu_test.py; gpu=$?
echo "=== torch_loop"
timeout 300 python3 torch_loop.py; loop=$?
echo "=== benchmark"
timeout 300 python3 benchmark.py --cpp ./ltx_allgather; bench=$?
echo "python bundle: gpu_test $(status ${gpu}), torch_loop $(status ${loop}), benchmark $(status ${bench})"
[[ ${gpu} -eq 0 && ${loop} -eq 0 && ${bench} -eq 0 ]]
