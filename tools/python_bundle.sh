#!/bin/bash
# Builds what the Python GPU tests need into device-bundle/py (ignored by git), for a GPU
# machine without Bazel or Abseil:
#
#   bash tools/python_bundle.sh            # here
#   bash device-bundle/py/run_gpu.sh       # on the GPU machine (python3 with torch)
#   LTX_TEST_DEVICES=0,0 LTX_REQUIRE_RUN=1 bash device-bundle/py/run_gpu.sh  # two ranks on GPU 0
#   LTX_FROM_WHEEL=1 bash device-bundle/py/run_gpu.sh   # the same from the wheel, pip-installed
#
# The bundle holds an install tree (tools/install.sh, -c opt), its wheel, the Python tests, the examples,
# the benchmark and the ltx_allgather tool it compares with. run_gpu.sh runs the GPU tests
# (AllGather and all-to-all, then AllReduce and ReduceScatter) in both allocator modes, the
# PyTorch custom ops' test, the examples and the benchmark, then prints one summary line.
set -euo pipefail
cd "$(dirname "$0")/.."
bundle=device-bundle/py
bazel build -c opt //ltx:libltx.so //tools/ltx_allgather
bin="$(bazel info -c opt bazel-bin 2>/dev/null)"
rm -rf "${bundle}" && mkdir -p "${bundle}"
bash tools/install.sh --prefix "${bundle}/prefix" --library "${bin}/ltx/libltx.so"
python3 tools/build_wheel.py --prefix "${bundle}/prefix" --out "${bundle}/wheel"
cp tests/python/gpu_test.py tests/python/cpu_test.py tests/python/torch_ops_test.py \
  tests/python/reduce_gpu_test.py tests/python/benchmark.py \
  ltx/python/examples/quick_start.py ltx/python/examples/torch_loop.py \
  ltx/python/examples/ulysses_attention.py ltx/python/examples/nccl_all_to_all.py "${bundle}/"
cp -L "${bin}/tools/ltx_allgather/ltx_allgather" "${bundle}/"
cp tools/python_bundle_run.sh "${bundle}/run_gpu.sh"
du -sh "${bundle}"
echo "GPU machine: bash ${bundle}/run_gpu.sh"
