#!/usr/bin/env bash
# Install the Debian packages kbench builds with, when they are missing.
# The CUDA Toolkit (NVRTC and headers) is a prerequisite: default /usr/local/cuda,
# or set CUDAToolkit_ROOT / CUDA_HOME.
set -euo pipefail

pkgs=(build-essential g++ cmake pkg-config libyaml-dev libjansson-dev libsqlite3-dev libffi-dev
      libbenchmark-dev liblapacke-dev python3 python3-numpy)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cuda="${CUDAToolkit_ROOT:-${CUDA_HOME:-/usr/local/cuda}}"
if [ ! -f "$cuda/include/nvrtc.h" ]; then
  echo "install-deps: the CUDA Toolkit was not found at $cuda (need include/nvrtc.h and libnvrtc)." >&2
  echo "install-deps: install it, or point CUDAToolkit_ROOT at it." >&2
  exit 3
fi
