#!/bin/bash
# Builds README's C example (tools/c_api_example/quick_start.c) against an installed ltx as a
# C99 program with pkg-config, and runs it where a GPU is present (nvidia-smi lists one). Without
# a GPU it only builds, and says so; LTX_REQUIRE_RUN=1 makes that a failure.
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tests/install_test_lib.sh"
export PKG_CONFIG_PATH="${prefix}/lib/pkgconfig"
example="${TEST_TMPDIR}/c_api_example"
cc -std=c99 -Wall -Wextra -Werror -o "${example}" \
  "${root}/tools/c_api_example/quick_start.c" $(pkg-config --cflags --libs ltx) \
  -L"$(pkg-config --variable=cuda_home ltx)/lib64" -lcudart_static -ldl -lpthread -lrt
echo "built ${example}"
if ! nvidia-smi -L >/dev/null 2>&1; then
  if [[ "${LTX_REQUIRE_RUN:-0}" == 1 ]]; then
    echo "FAIL: no GPU to run the example on (LTX_REQUIRE_RUN=1)"; exit 1
  fi
  echo "[  SKIPPED ] running the example: no GPU"; exit 0
fi
"${example}"
