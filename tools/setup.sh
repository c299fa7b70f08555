#!/bin/bash
# Installs the Debian 12 packages the Bazel build needs, if any are missing.
# Safe to run repeatedly; prints one line when everything is present.
# CUDA 13 is not a Debian package and must be installed separately.

set -euo pipefail

PACKAGES=(
  bazel-bootstrap
  bazel-rules-java
  build-essential
  cmake
  g++-12
  googletest
  libabsl-dev
  libgtest-dev
  openjdk-17-jdk-headless
  pkgconf
  python3
  python3-venv
)

NVCC=/usr/local/cuda/bin/nvcc

missing=()
for pkg in "${PACKAGES[@]}"; do
  status="$(dpkg-query -W -f='${Status}' "${pkg}" 2>/dev/null || true)"
  if [[ "${status}" != "install ok installed" ]]; then
    missing+=("${pkg}")
  fi
done

if ((${#missing[@]} > 0)); then
  echo "setup: installing ${missing[*]}"
  sudo=()
  if [[ "$(id -u)" -ne 0 ]]; then
    sudo=(sudo)
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [[ ! -x "${NVCC}" ]]; then
  echo "setup: ${NVCC} not found. Install the CUDA 13 toolkit into" \
    "/usr/local/cuda (https://developer.nvidia.com/cuda-downloads," \
    "Linux x86_64 Debian 12)." >&2
  exit 1
fi

if ((${#missing[@]} == 0)); then
  echo "setup: all packages present"
else
  echo "setup: done"
fi
