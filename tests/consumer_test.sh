#!/bin/bash
# Builds tests/consumer against an installed ltx with make + pkg-config and with CMake +
# find_package, and runs both builds (without a GPU they report FAILED_PRECONDITION and pass).
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tests/install_test_lib.sh"
work="${TEST_TMPDIR}/consumer"
rm -rf "${work}" && mkdir -p "${work}/make" "${work}/cmake"
cp "${root}"/tests/consumer/{consumer.c,Makefile,CMakeLists.txt} "${work}/make/"

echo "== make + pkg-config"
PKG_CONFIG_PATH="${prefix}/lib/pkgconfig" make -C "${work}/make"
"${work}/make/consumer"

echo "== cmake + find_package"
cmake -S "${work}/make" -B "${work}/cmake" -DCMAKE_PREFIX_PATH="${prefix}" >/dev/null
cmake --build "${work}/cmake"
"${work}/cmake/consumer"
echo "PASS"
