#!/bin/bash
# Runs the CPU tests of the Python package against the install tree of this build.
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tests/install_test_lib.sh"
cd "${TEST_TMPDIR}"
PYTHONPATH="${prefix}/lib/python" python3 "${root}/tests/python/cpu_test.py" -v
