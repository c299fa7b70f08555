#!/bin/bash
# Checks the installed libltx.so: it exports only ltx_* symbols, needs nothing beyond the C and
# C++ runtimes and the Abseil libraries installed beside it (found there through $ORIGIN), and
# not CUDA's shared runtime or driver (the static CUDA runtime loads the driver at run time).
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tests/install_test_lib.sh"
lib="${prefix}/lib/libltx.so"
fail=0

exports="$(nm -D --defined-only "${lib}" | awk '{print $3}')"
others="$(grep -v '^ltx_' <<<"${exports}" || true)"
if [[ -n "${others}" ]]; then
  echo "FAIL: symbols other than ltx_* exported:"; echo "${others}" | head -20; fail=1
fi
for symbol in ltx_version ltx_runtime_create ltx_all_gather ltx_all_gather_rank ltx_all_to_all \
    ltx_all_to_all_rank ltx_all_reduce ltx_all_reduce_rank ltx_reduce_scatter \
    ltx_reduce_scatter_rank ltx_all_gather_tensors ltx_all_gather_tensors_rank \
    ltx_all_to_all_tensors ltx_all_to_all_tensors_rank ltx_last_error; do
  grep -qx "${symbol}" <<<"${exports}" || { echo "FAIL: ${symbol} not exported"; fail=1; }
done

allowed='^(libc|libm|libstdc\+\+|libgcc_s|libdl|libpthread|librt)\.so\.[0-9]+$|^ld-linux-x86-64\.so\.2$|^libabsl_[a-z0-9_]+\.so\.20220623$'
for needed in $(readelf -d "${lib}" | sed -n 's/.*NEEDED.*\[\(.*\)\].*/\1/p'); do
  if ! grep -Eq "${allowed}" <<<"${needed}"; then
    echo "FAIL: libltx.so needs ${needed}"; fail=1
  fi
done
readelf -d "${lib}" | grep -q 'RPATH.*\[\$ORIGIN\]' || { echo "FAIL: no \$ORIGIN run path"; fail=1; }

# Every Abseil library (direct or indirect) must resolve to the copy beside libltx.so.
absl="$(ldd "${lib}" | grep libabsl_ || true)"
[[ -n "${absl}" ]] || { echo "FAIL: ldd shows no Abseil library"; fail=1; }
elsewhere="$(grep -v "=> ${prefix}/lib/libabsl_" <<<"${absl}" || true)"
if [[ -n "${elsewhere}" ]]; then
  echo "FAIL: Abseil resolved outside ${prefix}/lib:"; echo "${elsewhere}"; fail=1
fi
if ldd "${lib}" | grep -q 'not found'; then
  echo "FAIL: unresolved dependencies:"; ldd "${lib}" | grep 'not found'; fail=1
fi

((fail == 0)) && echo "PASS: $(wc -l <<<"${exports}") ltx_* symbols, $(wc -l <<<"${absl}") Abseil libraries from ${prefix}/lib"
exit "${fail}"
