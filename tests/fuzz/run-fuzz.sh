#!/usr/bin/env bash
# Builds the request-parser fuzzer with clang (libFuzzer + ASan + UBSan) and runs it for a
# bounded time. Exits non-zero on any crash, sanitizer report or broken invariant; exits 77
# (CTest "skipped") when no clang++ with libFuzzer is available.
#
#   run-fuzz.sh <builddir> [seconds=60]
#
# It compiles the four protocol sources directly: they only need Qt Core, so the fuzzer does not
# depend on the rest of the project (or on the project's own compiler and flags).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:?usage: run-fuzz.sh <builddir> [seconds]}
seconds=${2:-60}

cxx=${CMQ_FUZZ_CXX:-}
if [[ -z $cxx ]]; then
    for candidate in clang++-14 clang++; do
        if command -v "$candidate" >/dev/null; then
            cxx=$candidate
            break
        fi
    done
fi
if [[ -z $cxx ]]; then
    echo "run-fuzz.sh: no clang++ found; skipping" >&2
    exit 77
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
binary=$out/fuzz_requestparser

sources=(
    "$here/fuzz_requestparser.cpp"
    "$root/common/protocol/lineframer.cpp"
    "$root/common/protocol/requestparser.cpp"
    "$root/common/protocol/replies.cpp"
    "$root/common/protocol/envelope.cpp"
)
headers=("$root"/common/protocol/*.h "$root/common/util/result.h")

# Rebuild only when a source, a header or this script changed.
stale=0
[[ -x $binary ]] || stale=1
for f in "${sources[@]}" "${headers[@]}" "${BASH_SOURCE[0]}"; do
    [[ $f -nt $binary ]] && stale=1
done

if ((stale)); then
    # vptr checks need RTTI of every Qt class, which Qt's release build does not guarantee;
    # everything else UBSan knows stays on and fatal. Qt is built with -reduce-relocations,
    # hence -fPIC.
    # shellcheck disable=SC2046 # pkg-config output is meant to be split
    "$cxx" -std=c++20 -g -O1 -fno-omit-frame-pointer -fPIC -Wall -Wextra \
        -fsanitize=fuzzer,address,undefined -fno-sanitize=vptr -fno-sanitize-recover=all \
        -DQT_NO_KEYWORDS -I"$root/common" \
        "${sources[@]}" \
        $(pkg-config --cflags --libs Qt6Core) \
        -o "$binary.tmp"
    mv "$binary.tmp" "$binary"
fi

# New inputs go to the build directory's corpus; the committed seeds are only read.
mkdir -p "$out/corpus" "$out/artifacts"
# libFuzzer reports crashes with exit code 77 by default, which CTest would take for "skipped".
exec "$binary" \
    -max_total_time="$seconds" \
    -max_len=8192 \
    -timeout=10 \
    -rss_limit_mb=2048 \
    -error_exitcode=1 \
    -timeout_exitcode=2 \
    -print_final_stats=1 \
    -dict="$here/requests.dict" \
    -artifact_prefix="$out/artifacts/" \
    "$out/corpus" "$here/corpus"
