#!/usr/bin/env bash
# fuzz.sh [SECONDS] [suite|spec|model] - build the libFuzzer target of the suite loader + planner
# (default; `spec`: the acceptance spec reader, seeds data/acceptance/ and
# tests/fuzz/spec_regressions/) with clang
# (ASan + UBSan) in build-fuzz/ and run it for SECONDS (default 60) from the seed corpus
# (suites/, tests/suites/, tests/fuzz/regressions/). A crash is saved by libFuzzer as
# build-fuzz/crash-*; copy it into tests/fuzz/regressions/ once fixed, where the ordinary
# test fuzz_regressions replays it in every build.
# fuzz.sh SECONDS model - the same for the model description loader (fuzz_model; seeds
# data/models/, tests/data/model_tiny.yaml, tests/fuzz/model_regressions/).
# fuzz.sh SECONDS ktcache - the same for the Kernel Tuner cache reader of `kbench tune
# --replay` (fuzz_ktcache; seeds tests/data/kt_*.json, tests/fuzz/ktcache_regressions/).
# fuzz.sh SECONDS coll - what the collectives read: launcher variables, rendezvous, fault hooks,
# sizes (fuzz_coll; seeds tests/fuzz/coll_regressions/).
# fuzz.sh SECONDS records - the record reader through every report, compare and --resume's
# inspection (fuzz_records; seeds tests/data/*.jsonl, tests/fuzz/records_regressions/).
# fuzz.sh SECONDS rankfile - the rank-file reader of kbench fleet, the merge and its pages
# (fuzz_rankfile; seeds tests/fuzz/rankfile_regressions/).
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-60}"
target="${2:-suite}"
case "$target" in suite|spec|model|ktcache|coll|records|rankfile) ;;
  *) echo "fuzz.sh: target suite, spec, model, ktcache, coll, records or rankfile, not $target" >&2; exit 2;; esac
# libFuzzer comes with clang's runtime (Debian: clang, libclang-rt-14-dev)
need=()
command -v clang > /dev/null || need+=(clang)
dpkg-query -W -f='${Status}' libclang-rt-14-dev 2>/dev/null | grep -q "install ok installed" || need+=(libclang-rt-14-dev)
if ((${#need[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
      "${need[@]}" > /dev/null
fi
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DKB_FUZZ=ON > /dev/null
cmake --build build-fuzz -j"$(nproc)" --target "fuzz_$target"
corpus="corpus-$target"
mkdir -p "build-fuzz/$corpus"
if [ "$target" = suite ]; then
  cp suites/*.yaml tests/suites/*.yaml tests/fuzz/regressions/* "build-fuzz/$corpus/" 2>/dev/null || true
elif [ "$target" = ktcache ]; then
  cp tests/data/kt_*.json tests/fuzz/ktcache_regressions/* "build-fuzz/$corpus/" 2>/dev/null || true
elif [ "$target" = records ]; then
  cp tests/data/*.jsonl tests/fuzz/records_regressions/* "build-fuzz/$corpus/" 2>/dev/null || true
elif [ "$target" = rankfile ]; then
  cp tests/fuzz/rankfile_regressions/* "build-fuzz/$corpus/" 2>/dev/null || true
elif [ "$target" = coll ]; then
  cp tests/fuzz/coll_regressions/* "build-fuzz/$corpus/" 2>/dev/null || true
elif [ "$target" = model ]; then
  cp data/models/*.yaml tests/data/model_tiny.yaml tests/fuzz/model_regressions/* "build-fuzz/$corpus/" 2>/dev/null || true
else
  cp data/acceptance/*.yaml tests/fuzz/spec_regressions/* "build-fuzz/$corpus/" 2>/dev/null || true
fi
cd build-fuzz
LD_LIBRARY_PATH="${CUDAToolkit_ROOT:-/usr/local/cuda}/lib64" \
    ./"fuzz_$target" "$corpus" -max_total_time="$secs" -max_len=8192 -rss_limit_mb=2048 -timeout=10 -print_final_stats=1
