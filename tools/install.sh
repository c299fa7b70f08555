#!/bin/bash
# Installs ltx for use from any build system and from Python:
#
#   tools/install.sh --prefix DIR [--library PATH]
#
# It builds libltx.so with `bazel build -c opt` (or takes the one at PATH) and puts under DIR:
#   include/ltx/c_api.h                          the C API
#   lib/libltx.so, lib/libabsl_*.so.20220623     the library, and the Abseil it needs (found
#                                                through libltx.so's $ORIGIN run path)
#   lib/pkgconfig/ltx.pc                         for pkg-config
#   lib/cmake/ltx/ltxConfig*.cmake               for find_package(ltx): target ltx::ltx
#   lib/python/ltx/                              the Python package (PYTHONPATH=DIR/lib/python)
# CUDA_HOME (default /usr/local/cuda) is where the .pc and CMake files look for CUDA's headers.
set -euo pipefail

readonly ABSL_LIBDIR=/usr/lib/x86_64-linux-gnu
source_dir="$(cd "$(dirname "$0")/.." && pwd)"
cuda_home="${CUDA_HOME:-/usr/local/cuda}"
prefix=""
library=""

usage() {
  echo "usage: $0 --prefix DIR [--library PATH/libltx.so]" >&2
  exit 2
}

while (($# > 0)); do
  case "$1" in
    --prefix) prefix="${2:?}"; shift 2 ;;
    --library) library="${2:?}"; shift 2 ;;
    *) usage ;;
  esac
done
[[ -n "${prefix}" ]] || usage

if [[ -z "${library}" ]]; then
  (cd "${source_dir}" && bazel build -c opt //ltx:libltx.so)
  library="$(cd "${source_dir}" && bazel info -c opt bazel-bin 2>/dev/null)/ltx/libltx.so"
fi
[[ -f "${library}" ]] || { echo "install: no library at ${library}" >&2; exit 1; }

# The libabsl_* sonames that `lib` needs, directly and through other Abseil libraries.
absl_closure() {
  local -A seen=()
  local queue=("$1") lib name
  while ((${#queue[@]} > 0)); do
    lib="${queue[0]}"
    queue=("${queue[@]:1}")
    for name in $(readelf -d "${lib}" | sed -n 's/.*NEEDED.*\[\(libabsl_[^]]*\)\].*/\1/p'); do
      if [[ -z "${seen[${name}]:-}" ]]; then
        seen[${name}]=1
        queue+=("${ABSL_LIBDIR}/${name}")
      fi
    done
  done
  printf '%s\n' "${!seen[@]}"
}

# Copies template `name` of tools/packaging to `target`, filling in the values.
fill_template() {
  local version
  version="$(sed -n 's/^#define LTX_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' \
    "${source_dir}/ltx/c_api.h" | paste -sd.)"
  mkdir -p "$(dirname "$2")"
  sed -e "s|@VERSION@|${version}|g" -e "s|@VERSION_MAJOR@|${version%%.*}|g" \
    -e "s|@CUDA_HOME@|${cuda_home}|g" "${source_dir}/tools/packaging/$1" > "$2"
}

mkdir -p "${prefix}/include/ltx" "${prefix}/lib/python/ltx"
prefix="$(cd "${prefix}" && pwd)"
install -m 644 "${source_dir}/ltx/c_api.h" "${prefix}/include/ltx/c_api.h"
install -m 755 "${library}" "${prefix}/lib/libltx.so"
for name in $(absl_closure "${library}"); do
  install -m 644 "${ABSL_LIBDIR}/${name}" "${prefix}/lib/${name}"
done
fill_template ltx.pc.in "${prefix}/lib/pkgconfig/ltx.pc"
fill_template ltxConfig.cmake.in "${prefix}/lib/cmake/ltx/ltxConfig.cmake"
fill_template ltxConfigVersion.cmake.in "${prefix}/lib/cmake/ltx/ltxConfigVersion.cmake"
install -m 644 "${source_dir}"/ltx/python/ltx/*.py "${prefix}/lib/python/ltx/"
echo "install: ltx in ${prefix}"
