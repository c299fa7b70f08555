#!/bin/bash
# run_gpu.sh of the Python bundle (tools/python_bundle.sh): runs the Python package's tests,
# the PyTorch examples and the Python benchmark on a GPU machine, then one summary line:
#   python bundle: gpu_test <status>, reduce_gpu_test <status>, torch_ops_test <status>,
#   quick_start <status>, torch_loop <status>, ulysses_attention <status>,
#   ulysses_attention fp8 <status>, benchmark <status>
# Each runs on the rank layout of the environment, which this script passes on unchanged:
#   LTX_TEST_DEVICES=0,0,1 | LTX_TEST_RANKS=N, and LTX_REQUIRE_RUN=1 (a skip is a failure), e.g.
#   LTX_TEST_DEVICES=0,0,0,0 LTX_REQUIRE_RUN=1 bash run_gpu.sh
# gpu_test and reduce_gpu_test fail when either allocator mode fails. Exit 0 only when everything passed.
# With LTX_FROM_WHEEL=1 everything runs from the bundle's wheel instead of the install tree:
# pip installs it offline into a fresh virtual environment (which sees python3's torch), and
# the tests import ltx from there, with no PYTHONPATH.
cd "$(dirname "$0")" || exit 1
export NCCL_NVLS_ENABLE=0
if [[ "${LTX_FROM_WHEEL:-0}" == 1 ]]; then
  venv="$(mktemp -d)/venv"
  if ! python3 -m venv "${venv}" ||
     ! "${venv}/bin/pip" install --no-index --quiet wheel/ltx-*.whl; then
    echo "python bundle: installing the wheel into a fresh virtual environment failed"
    exit 1
  fi
  # The environment sees the site-packages of the python3 that has torch (which may itself be
  # a virtual environment's), behind its own.
  python3 -c 'import sys; print("\n".join(p for p in sys.path if p.endswith("-packages")))' \
    > "$("${venv}/bin/python3" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/torch_site.pth"
  export PATH="${venv}/bin:${PATH}"
  unset PYTHONPATH
  python3 -c 'import ltx; print("ltx", ltx.__version__, "from", ltx.__file__)'
else
  export PYTHONPATH="${PWD}/prefix/lib/python"
fi
python3 -c 'import torch; print("torch", torch.__version__, "GPUs:", torch.cuda.device_count())'
ldd prefix/lib/libltx.so | grep -E 'not found|absl_base' || true
echo "rank layout: LTX_TEST_DEVICES=${LTX_TEST_DEVICES-unset}" \
  "LTX_TEST_RANKS=${LTX_TEST_RANKS-unset} LTX_REQUIRE_RUN=${LTX_REQUIRE_RUN-unset}"

# Exit 0: PASS; 77: SKIPPED (no torch or no GPU); else FAIL.
status() {
  case "$1" in 0) echo PASS ;; 77) echo SKIPPED ;; *) echo "FAIL(exit $1)" ;; esac
}
echo "=== cpu_test"
timeout 60 python3 cpu_test.py 2>&1 | tail -3
echo "=== gpu_test (default and expandable_segments allocators)"
timeout 330 python3 gpu_test.py; gpu=$?
echo "=== reduce_gpu_test (AllReduce and ReduceScatter, both allocators)"
timeout 330 python3 reduce_gpu_test.py; reduce=$?
echo "=== torch_ops_test (torch.compile and CUDA graphs over the custom ops)"
timeout 420 python3 torch_ops_test.py; ops=$?
echo "=== quick_start (README's example)"
timeout 60 python3 quick_start.py; quick=$?
echo "=== torch_loop"
timeout 90 python3 torch_loop.py; loop=$?
echo "=== ulysses_attention"
timeout 90 python3 ulysses_attention.py --head-groups 2; ulysses=$?
echo "=== ulysses_attention --wire fp8_e4m3"
timeout 90 python3 ulysses_attention.py --head-groups 2 --wire fp8_e4m3; ulysses_fp8=$?
echo "=== benchmark"
timeout 150 python3 benchmark.py --cpp ./ltx_allgather; bench=$?
echo "python bundle: gpu_test $(status ${gpu}), reduce_gpu_test $(status ${reduce})," \
  "torch_ops_test $(status ${ops})," \
  "quick_start $(status ${quick})," \
  "torch_loop $(status ${loop}), ulysses_attention $(status ${ulysses})," \
  "ulysses_attention fp8 $(status ${ulysses_fp8})," \
  "benchmark $(status ${bench})"
[[ ${gpu} -eq 0 && ${reduce} -eq 0 && ${ops} -eq 0 && ${quick} -eq 0 && ${loop} -eq 0 &&
  ${ulysses} -eq 0 && ${ulysses_fp8} -eq 0 && ${bench} -eq 0 ]]
