#!/bin/bash
# The collective kernels' resources on sm_90 as ptxas reports them: no stack frame and no spills
# for the AllGather and all-to-all kernels of the direct and one-trip paths and the reductions'
# kernels (with and without the RMSNorm epilogue). An array that a kernel indexes with a value known only at run
# time (a tensor number, a rank) lands in local memory, and with it every copy slows: the
# AllGather of 4 MiB per rank took 23 % longer on H200 with a 320-byte frame. Needs nvcc where
# tools/bazel/cuda.bzl finds it.
set -euo pipefail
nvcc=/usr/local/cuda/bin/nvcc
if [[ ! -x "${nvcc}" ]]; then
  echo "kernel_resources_test: no nvcc at ${nvcc}"
  exit 1
fi
export TMPDIR="${TEST_TMPDIR:-$(mktemp -d)}"
failed=0
checked=0
for src in kernels/allgather/allgather_kernel.cu kernels/alltoall/alltoall_kernel.cu \
           kernels/allgather/allgather_one_trip_kernel.cu \
           kernels/alltoall/alltoall_one_trip_kernel.cu kernels/reduce/reduce_kernel.cu; do
  report="$("${nvcc}" -x cu -std=c++17 -O3 -gencode=arch=compute_90,code=sm_90 \
    --expt-relaxed-constexpr -I. -Xptxas -v -c "${src}" -o "${TMPDIR}/kernel.o" 2>&1)" || {
    echo "${src}: nvcc failed:"; echo "${report}"; exit 1; }
  # "Function properties for <name>" is followed by "<F> bytes stack frame, <S> bytes spill
  # stores, <L> bytes spill loads".
  while read -r name frame stores loads; do
    checked=$((checked + 1))
    if [[ "${frame}" != 0 || "${stores}" != 0 || "${loads}" != 0 ]]; then
      echo "FAIL ${src}: ${name}: ${frame} bytes stack frame, ${stores} bytes spill stores," \
        "${loads} bytes spill loads"
      failed=$((failed + 1))
    else
      echo "ok   ${src}: ${name}"
    fi
  done < <(awk '
    /Function properties for/ { name = $NF; next }
    /bytes stack frame/ && name ~ /(AllGatherKernel|AllToAllKernel|OneTripKernel|ReduceKernel|RmsNormKernel)I/ {
      print name, $1, $5, $9; name = "" }' <<< "${report}")
done
echo "kernel_resources_test: ${checked} kernels checked, ${failed} with a stack frame or spills"
[[ ${checked} -ge 14 && ${failed} -eq 0 ]]
