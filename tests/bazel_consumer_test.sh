#!/bin/bash
# Creates a second Bazel workspace under $TEST_TMPDIR whose cc_binary depends on @ltx//ltx
# (local_repository pointing at this source tree), builds it with a nested Bazel in batch mode
# and runs it (without a GPU it reports FAILED_PRECONDITION and passes).
set -euo pipefail
runfiles="${TEST_SRCDIR}/${TEST_WORKSPACE}"
# The source tree itself: the runfiles hold links into it.
ltx="$(readlink -f "${runfiles}/tests/bazel_consumer/main.cc")"
ltx="${ltx%/tests/bazel_consumer/main.cc}"
work="${TEST_TMPDIR}/consumer"
rm -rf "${work}" && mkdir -p "${work}"
sed "s|@LTX@|${ltx}|g" "${runfiles}/tests/bazel_consumer/WORKSPACE.in" > "${work}/WORKSPACE"
cp "${runfiles}/tests/bazel_consumer/BUILD.in" "${work}/BUILD"
cp "${runfiles}/tests/bazel_consumer/bazelrc.in" "${work}/.bazelrc"
cp "${runfiles}/tests/bazel_consumer/main.cc" "${work}/main.cc"

cd "${work}"
export HOME="${TEST_TMPDIR}"
bazel --batch --output_user_root="${TEST_TMPDIR}/bazel_root" build --noshow_progress \
  --jobs=2 --spawn_strategy=local //:app
./bazel-bin/app
echo "PASS"
