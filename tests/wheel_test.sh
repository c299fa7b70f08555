#!/bin/bash
# Builds the wheel (tools/build_wheel.py) from the install tree of this build, installs it with
# pip, offline, into a fresh virtual environment, and checks there, with no PYTHONPATH: the
# version, that the package loads the libltx.so of the wheel, and the error without a GPU (or a
# Runtime over the visible GPUs where there are some).
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tests/install_test_lib.sh"
wheel="$(python3 "${root}/tools/build_wheel.py" --prefix "${prefix}" --out "${TEST_TMPDIR}/wheels")"
echo "built ${wheel}"
venv="${TEST_TMPDIR}/venv"
rm -rf "${venv}"
python3 -m venv "${venv}"
"${venv}/bin/python" -m pip install --no-index --no-cache-dir --quiet "${wheel}"
cd "${TEST_TMPDIR}"
env -u PYTHONPATH -u LTX_LIBRARY "${venv}/bin/python" - "${venv}" <<'PYEOF'
import os
import sys

import ltx

venv = os.path.realpath(sys.argv[1])
assert ltx.__version__ == "%d.%d.%d" % (ltx.version() // 10000, ltx.version() // 100 % 100,
                                        ltx.version() % 100), (ltx.__version__, ltx.version())
path = os.path.realpath(ltx.library_path())
assert path.startswith(venv + os.sep) and path.endswith(os.sep + "libltx.so"), path
try:
    with ltx.Runtime() as runtime:
        print(f"ltx {ltx.__version__} from {path}: a Runtime of {runtime.world_size} ranks")
except ltx.FailedPreconditionError as e:
    assert "no CUDA GPU is visible" in str(e), e
    print(f"ltx {ltx.__version__} from {path}: {e}")
PYEOF
echo "PASS: the wheel installs offline and works"
