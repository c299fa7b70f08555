# Sourced by the install tests: installs ltx from this test's runfiles into
# $TEST_TMPDIR/prefix (with the libltx.so Bazel built) and sets `root` (the source tree in the
# runfiles) and `prefix`.
set -euo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
prefix="${TEST_TMPDIR}/prefix"
rm -rf "${prefix}"
bash "${root}/tools/install.sh" --prefix "${prefix}" --library "${root}/ltx/libltx.so" >/dev/null
