#!/usr/bin/env bash
# check-needed.sh BINARY - the kbench binary must not depend on a GPU driver or vendor
# library at load time: libcuda, libnvrtc, libcublas(Lt), libcudnn and libnvidia-ml are
# dlopen'ed,
# so the binary starts (and explains itself) on machines without them.
set -euo pipefail
bin="$1"
needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
echo "$needed" | sed 's/^/NEEDED /'
bad=$(echo "$needed" | grep -E '^lib(cuda|nvrtc|cublas|cublasLt|cudnn[a-z_]*|nvidia-ml)\.so' || true)
if [ -n "$bad" ]; then
  echo "check-needed: $bin must dlopen these, not link them: $bad" >&2
  echo "1 passed, 1 failed"
  exit 1
fi
echo "1 passed, 0 failed"
