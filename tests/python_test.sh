#!/bin/bash
# Runs a Python test script with the system's python3 (Bazel 4's py_test stub needs a `python`
# executable, which Debian does not install): python_test.sh SCRIPT [ARGS...]
set -euo pipefail
exec python3 "$@"
