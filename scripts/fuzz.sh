#!/usr/bin/env bash
# fuzz.sh [SECONDS] [TARGET...] - run the libFuzzer targets of kbench's parsers of user input.
#
# Every tests/fuzz/fuzz_<name>.c is a target (CMakeLists.txt: kb_fuzz_target): suite (the suite
# loader + planner + plan walk), spec (the acceptance spec reader), model (the model
# description loader), coll (what the collectives read), and whatever is added later - this
# script finds them, so a new target needs no edit here. With no TARGET it runs every one,
# each for SECONDS (default 60), from its seed corpus: the directories its kb_fuzz_target
# names (build-fuzz/fuzz_<name>.seeds: its regression corpus first, then shipped files).
#
# The build is clang with ASan + UBSan and -DKB_FUZZ=ON in build-fuzz/ (KB_FUZZ_BUILD=DIR for
# another; .ci/run's sanitizer tier runs the whole test suite in the same build). A crash is
# saved by libFuzzer as <build>/crash-*; once fixed, copy it into the target's regression
# corpus (tests/fuzz/<name>_regressions/, the suite's is tests/fuzz/regressions/), where the
# ordinary test fuzz_<name>_regressions replays it in every build.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-60}"
shift || true
build="${KB_FUZZ_BUILD:-build-fuzz}"
all=()
for src in tests/fuzz/fuzz_*.c; do
  name="${src#tests/fuzz/fuzz_}"
  all+=("${name%.c}")
done
targets=("$@")
((${#targets[@]})) || targets=("${all[@]}")
for t in "${targets[@]}"; do
  [ -f "tests/fuzz/fuzz_$t.c" ] || { echo "fuzz.sh: no target $t (there are: ${all[*]})" >&2; exit 2; }
done
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
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DKB_FUZZ=ON > /dev/null
cmake --build "$build" -j"$(nproc)" --target "${targets[@]/#/fuzz_}"
failed=()
for t in "${targets[@]}"; do
  seeds="$build/fuzz_$t.seeds"
  [ -f "$seeds" ] || { echo "fuzz.sh: $seeds missing: declare tests/fuzz/fuzz_$t.c with kb_fuzz_target" >&2; exit 2; }
  corpus="$build/corpus-$t"
  mkdir -p "$corpus"
  while read -r dir; do
    [ -n "$dir" ] && find "$dir" -maxdepth 1 -type f ! -name '.*' -exec cp {} "$corpus/" \;
  done < "$seeds"
  echo "== fuzz_$t: ${secs} s from $(find "$corpus" -type f | wc -l) inputs"
  # -rss_limit_mb: a parser may not need 2 GB for 8 KB of input; -timeout: nor 10 s
  if ! (cd "$build" && LD_LIBRARY_PATH="${CUDAToolkit_ROOT:-/usr/local/cuda}/lib64" \
        "./fuzz_$t" "corpus-$t" -max_total_time="$secs" -max_len=8192 -rss_limit_mb=2048 -timeout=10 \
        -print_final_stats=1); then
    failed+=("$t")
  fi
done
if ((${#failed[@]})); then
  echo "fuzz.sh: found a crash in: ${failed[*]} (the input is $build/crash-*)" >&2
  exit 1
fi
echo "fuzz.sh: ${#targets[@]} targets (${targets[*]}), ${secs} s each, no crash"
