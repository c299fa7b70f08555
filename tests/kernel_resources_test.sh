#!/bin/bash
# The kernels' resources as ptxas reports them, for sm_80 and sm_90 as tools/bazel/cuda.bzl
# builds them: no stack frame and no spills, for every kernel of the AllGather (direct,
# one-trip and FP8 paths), the all-to-all (direct, one-trip and FP8 paths), the reductions (with and
# without the RMSNorm epilogue, and the epilogue alone) and the copy engines. An array that a
# kernel indexes with a value known only at run time (a tensor number, a rank, a line) lands in
# local memory, and with it every copy slows: the AllGather of 4 MiB per rank took 23 % longer
# on H200 with a 320-byte frame. Needs nvcc and the host compiler where tools/bazel/cuda.bzl
# finds them.
set -euo pipefail
nvcc=/usr/local/cuda/bin/nvcc
host_compiler=/usr/bin/g++-12
for tool in "${nvcc}" "${host_compiler}"; do
  if [[ ! -x "${tool}" ]]; then
    echo "kernel_resources_test: no ${tool} (tools/bazel/cuda.bzl builds the kernels with it)"
    exit 1
  fi
done
export TMPDIR="${TEST_TMPDIR:-$(mktemp -d)}"
# Each source and the kernels it must define: instantiations times the two architectures.
sources=(
  "kernels/allgather/allgather_kernel.cu 4"
  "kernels/allgather/allgather_one_trip_kernel.cu 4"
  "kernels/allgather/allgather_fp8_kernel.cu 14"
  "kernels/alltoall/alltoall_kernel.cu 4"
  "kernels/alltoall/alltoall_one_trip_kernel.cu 4"
  "kernels/alltoall/alltoall_fp8_kernel.cu 8"
  "kernels/reduce/reduce_kernel.cu 18"
  "kernels/copy_engine/copy_engine_exit_kernel.cu 2"
  "kernels/copy_engine/copy_engine_graph_kernel.cu 4"
)
failed=0
for entry in "${sources[@]}"; do
  read -r src expected <<< "${entry}"
  report="$("${nvcc}" -x cu -ccbin "${host_compiler}" -std=c++17 -O3 \
    -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_90,code=sm_90 \
    --expt-relaxed-constexpr -I. -Xptxas -v -c "${src}" -o "${TMPDIR}/kernel.o" 2>&1)" || {
    echo "${src}: nvcc failed:"; echo "${report}"; exit 1; }
  # "Compiling entry function '<name>' for 'sm_XX'" is followed, after "Function properties for
  # <name>", by "<F> bytes stack frame, <S> bytes spill stores, <L> bytes spill loads".
  checked=0
  before=${failed}
  while read -r name arch frame stores loads; do
    checked=$((checked + 1))
    if [[ "${frame}" != 0 || "${stores}" != 0 || "${loads}" != 0 ]]; then
      echo "FAIL ${src} (${arch}): ${name}: ${frame} bytes stack frame, ${stores} bytes spill" \
        "stores, ${loads} bytes spill loads"
      failed=$((failed + 1))
    fi
  done < <(awk '
    /Compiling entry function/ {
      entry = $7; arch = $9; gsub(/\047/, "", entry); gsub(/\047/, "", arch); next }
    /Function properties for/ { name = $NF; next }
    /bytes stack frame/ && name != "" && name == entry {
      print name, arch, $1, $5, $9; name = "" }' <<< "${report}")
  if [[ ${checked} -ne ${expected} ]]; then
    echo "FAIL ${src}: ${checked} kernels in ptxas's report, expected ${expected}"
    failed=$((failed + 1))
  elif [[ ${failed} -eq ${before} ]]; then
    echo "ok   ${src}: ${checked} kernels, no stack frame, no spills"
  fi
done
echo "kernel_resources_test: ${failed} failure(s)"
[[ ${failed} -eq 0 ]]
