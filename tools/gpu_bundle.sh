#!/bin/bash
# Builds every test and tool executable (-c opt) and packs them into device-bundle/ (ignored by
# git) with a run.sh, for a GPU machine that has no Bazel: the executables link Abseil and the
# CUDA runtime statically, so they run there as they are.
#
#   bash tools/gpu_bundle.sh                      # every cc_test and cc_binary of //tests, //tools
#   bash tools/gpu_bundle.sh //tests:allgather_test //tools/ltx_allgather   # only these
#
# On the GPU machine:
#   bash device-bundle/run.sh                     # every test binary, one line each, a summary
#   LTX_TEST_RANKS=8 LTX_REQUIRE_RUN=1 bash device-bundle/run.sh   # 8 ranks, no skip allowed
#   LTX_BUNDLE_ONLY="allgather_test alltoall_test" bash device-bundle/run.sh
#   LTX_BUNDLE_TIMEOUT=120 bash device-bundle/run.sh   # seconds per test binary (default 540)
#   bash device-bundle/ranks.sh 2 3 4 8           # the whole bundle at each rank count, a line each
#   bash device-bundle/sanitize.sh racecheck 4 allgather_test alltoall_test   # under a sanitizer
#   bash device-bundle/unpack.sh && device-bundle/ltx_allgather --help
# One bundle at a time on a GPU: tests that fill its SMs with a busy kernel, or time a late peer,
# take the GPU as theirs, and another process's kernels (time-sliced with theirs) break that.
# run.sh passes its arguments to every test binary (e.g. --gtest_filter=...) and the rank layout
# variables (tools/testing/test_ranks.h) through the environment; it exits 0 only when every
# test binary passed. `bash tools/python_bundle.sh` afterwards adds the Python tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bundle=device-bundle
if [[ $# -gt 0 ]]; then
  targets=("$@")
else
  mapfile -t targets < <(bazel query --noshow_progress \
    'kind("cc_test rule|cc_binary rule", //tests/... + //tools/...)' 2>/dev/null)
fi
if [[ ${#targets[@]} -eq 0 ]]; then
  echo "gpu_bundle: no cc_test or cc_binary target found" >&2
  exit 1
fi
mapfile -t tests < <(bazel query --noshow_progress \
  "kind('cc_test rule', set(${targets[*]}))" 2>/dev/null)
bazel build -c opt "${targets[@]}"
bin="$(bazel info -c opt bazel-bin 2>/dev/null)"
rm -rf "${bundle}" && mkdir -p "${bundle}/bin"
names=()
for target in "${targets[@]}"; do
  package="${target#//}"
  package="${package%%:*}"
  name="${target##*:}"
  [[ "${name}" == "${target}" ]] && name="${package##*/}"
  cp -L "${bin}/${package}/${name}" "${bundle}/bin/${name}"
  for test in "${tests[@]}"; do
    [[ "${test}" == "${target}" || "${test}" == "//${package}:${name}" ]] && names+=("${name}")
  done
done
(cd "${bundle}/bin" && tar -cJf ../bins.tar.xz -- * && cd .. && rm -rf bin)

cat > "${bundle}/unpack.sh" <<'EOF'
#!/bin/bash
# Unpacks the bundle's executables next to this script, once.
cd "$(dirname "$0")" && { [[ -f .unpacked ]] || { tar -xJf bins.tar.xz && touch .unpacked; }; }
EOF

cat > "${bundle}/run.sh" <<EOF
#!/bin/bash
# Runs every test binary of the bundle: one line per binary, then "bundle: P passed, F failed".
cd "\$(dirname "\$0")" && bash ./unpack.sh || { echo "bundle: unpacking failed"; exit 1; }
export NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=index,name --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"
echo "rank layout: LTX_TEST_DEVICES=\${LTX_TEST_DEVICES-unset} LTX_TEST_RANKS=\${LTX_TEST_RANKS-unset} LTX_REQUIRE_RUN=\${LTX_REQUIRE_RUN-unset}"
passed=0
failed=0
for test in ${names[*]}; do
  if [[ -n "\${LTX_BUNDLE_ONLY:-}" && " \${LTX_BUNDLE_ONLY} " != *" \${test} "* ]]; then
    continue
  fi
  echo "=== \${test}"
  start=\${SECONDS}
  timeout "\${LTX_BUNDLE_TIMEOUT:-540}" "./\${test}" --gtest_brief=1 "\$@"
  code=\$?
  if [[ \${code} -eq 0 ]]; then
    passed=\$((passed + 1))
    echo "=== \${test}: PASSED (\$((SECONDS - start)) s)"
  else
    failed=\$((failed + 1))
    echo "=== \${test}: FAILED (exit \${code}, \$((SECONDS - start)) s)"
  fi
done
echo "bundle: \${passed} passed, \${failed} failed"
[[ \${failed} -eq 0 ]]
EOF
cat > "${bundle}/ranks.sh" <<'EOF'
#!/bin/bash
# Runs the bundle once per rank count, each on LTX_TEST_RANKS=<n> with LTX_REQUIRE_RUN=1 (unless
# set): bash ranks.sh 2 3 4 8 [-- arguments for every test binary]. Prints one line per count
# (its summary and the binaries that failed); the logs go to ranks-<n>.log in LTX_BUNDLE_LOGS
# (default: this folder). Exit 0 only when every count passed.
cd "$(dirname "$0")" || exit 1
logs="${LTX_BUNDLE_LOGS:-.}"
counts=()
while [[ $# -gt 0 && "$1" != "--" ]]; do counts+=("$1"); shift; done
[[ "${1:-}" == "--" ]] && shift
status=0
for n in "${counts[@]}"; do
  log="${logs}/ranks-${n}.log"
  LTX_TEST_RANKS="${n}" LTX_REQUIRE_RUN="${LTX_REQUIRE_RUN:-1}" bash ./run.sh "$@" > "${log}" 2>&1 ||
    status=1
  summary="$(grep '^bundle:' "${log}" || echo 'bundle: stopped before its summary')"
  failed="$(sed -n 's/^=== \([^ ]*\): FAILED.*/\1/p' "${log}" | tr '\n' ' ')"
  echo "${n} ranks: ${summary}${failed:+; failed: ${failed}}"
done
exit "${status}"
EOF
cat > "${bundle}/sanitize.sh" <<'EOF'
#!/bin/bash
# Runs test binaries of the bundle under compute-sanitizer: bash sanitize.sh TOOL RANKS TEST...
# [-- arguments for every test binary], e.g. bash sanitize.sh memcheck 4 allgather_test
# alltoall_test -- --gtest_filter='*Misaligned*'. TOOL is memcheck, racecheck, synccheck or
# initcheck; every test runs on LTX_TEST_RANKS=RANKS with LTX_REQUIRE_RUN=1 (unless set). Prints
# one line per test (compute-sanitizer's error summary, or why it has none); the logs go to
# sanitize-TOOL-RANKS-TEST.log in LTX_BUNDLE_LOGS (default: this folder). Exit 0 only when every
# test passed with no error reported. The tests see LTX_TEST_UNDER_SANITIZER=TOOL and leave out
# their bounds on how long a kernel's phases take.
cd "$(dirname "$0")" || exit 1
if [[ $# -lt 3 ]]; then
  echo "usage: bash sanitize.sh memcheck|racecheck|synccheck|initcheck RANKS TEST... [-- ARGS]"
  exit 2
fi
tool="$1"
ranks="$2"
shift 2
tests=()
while [[ $# -gt 0 && "$1" != "--" ]]; do tests+=("$1"); shift; done
[[ "${1:-}" == "--" ]] && shift
if [[ ${#tests[@]} -eq 0 ]]; then
  echo "sanitize: name at least one test binary before --"
  exit 2
fi
bash ./unpack.sh || { echo "sanitize: unpacking failed"; exit 1; }
sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
[[ -x "${sanitizer}" ]] || { echo "sanitize: no compute-sanitizer on this machine"; exit 1; }
logs="${LTX_BUNDLE_LOGS:-.}"
status=0
for test in "${tests[@]}"; do
  log="${logs}/sanitize-${tool}-${ranks}-${test}.log"
  start=${SECONDS}
  LTX_TEST_RANKS="${ranks}" LTX_REQUIRE_RUN="${LTX_REQUIRE_RUN:-1}" NCCL_NVLS_ENABLE=0 \
    LTX_TEST_UNDER_SANITIZER="${tool}" timeout "${LTX_BUNDLE_TIMEOUT:-540}" "${sanitizer}" --tool "${tool}" --error-exitcode 99 \
    "./${test}" --gtest_brief=1 "$@" > "${log}" 2>&1
  code=$?
  # memcheck, synccheck and initcheck end with "ERROR SUMMARY", racecheck with "RACECHECK SUMMARY".
  summary="$(grep -m1 -E '(ERROR|RACECHECK) SUMMARY' "${log}" || echo 'no error summary (stopped early)')"
  tests_line="$(grep -E '^\[  (PASSED|FAILED) ' "${log}" | tr '\n' ' ')"
  echo "${test} (${tool}, ${ranks} ranks, $((SECONDS - start)) s): exit ${code}; ${summary#========= }; ${tests_line}"
  [[ ${code} -eq 0 ]] || status=1
done
exit "${status}"
EOF
chmod +x "${bundle}/run.sh" "${bundle}/unpack.sh" "${bundle}/ranks.sh" "${bundle}/sanitize.sh"
echo "gpu_bundle: ${#targets[@]} executables ($(du -sh "${bundle}" | cut -f1)), tests: ${names[*]:-none}"
echo "on the GPU machine: bash ${bundle}/run.sh"
