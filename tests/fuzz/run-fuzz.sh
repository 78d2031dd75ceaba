#!/usr/bin/env bash
# Builds one fuzz target with clang (libFuzzer + ASan + UBSan) and runs it for a bounded time.
# Exits non-zero on any crash, sanitizer report or broken invariant; exits 77 (CTest "skipped")
# when no clang++ with libFuzzer is available.
#
#   run-fuzz.sh <target> <builddir> [seconds=60] [extra libFuzzer options...]
#
# Targets (tests/fuzz/fuzz_<target>.cpp, seeds in corpus/<target>/, dictionary <target>.dict):
#   requestparser  framing, request parsing, envelope inspection, batch splitting
#   envelope       the envelope validator and batch splitter against Qt's reading of the JSON
#   adminrequest   the admin listener's framing and request parser
#   config         the broker's config loader (TOML parse and validation)
#
# It compiles the few sources a target needs directly: they only need Qt (and toml++ for the
# config loader), so the fuzzers do not depend on the rest of the project (or on the project's
# own compiler and flags). seconds=0 means no time limit (then pass -runs=N).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
target=${1:?usage: run-fuzz.sh <target> <builddir> [seconds] [libFuzzer options...]}
out=${2:?usage: run-fuzz.sh <target> <builddir> [seconds] [libFuzzer options...]}
seconds=${3:-60}
shift $(($# < 3 ? $# : 3))

protocol=(
    "$root/common/protocol/lineframer.cpp"
    "$root/common/protocol/requestparser.cpp"
    "$root/common/protocol/replies.cpp"
    "$root/common/protocol/envelope.cpp"
    "$root/common/protocol/flatenvelope.cpp"
)
headers=("$root"/common/protocol/*.h "$root/common/util/result.h" "$here/fuzzcheck.h")
packages=(Qt6Core)
includes=(-I"$root/common" -I"$here")
max_len=8192
case $target in
requestparser | envelope)
    sources=("${protocol[@]}")
    ;;
adminrequest)
    sources=("${protocol[@]}" "$root/common/admin/adminrequestparser.cpp"
             "$root/common/admin/pageoptions.cpp")
    headers+=("$root"/common/admin/adminrequest.h "$root"/common/admin/adminrequest_p.h)
    ;;
config)
    sources=("${protocol[@]}" "$root/broker/config/config.cpp" "$root/broker/config/tomlreader.cpp")
    headers+=("$root"/broker/config/*.h)
    packages=(Qt6Network tomlplusplus)
    includes+=(-I"$root/broker")
    max_len=16384
    ;;
*)
    echo "run-fuzz.sh: unknown target '$target'" >&2
    exit 2
    ;;
esac
sources=("$here/fuzz_$target.cpp" "${sources[@]}")

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

mkdir -p "$out/$target"
out=$(cd "$out/$target" && pwd)
binary=$out/fuzz_$target

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
        -DQT_NO_KEYWORDS "${includes[@]}" \
        "${sources[@]}" \
        $(pkg-config --cflags --libs "${packages[@]}") \
        -o "$binary.tmp"
    mv "$binary.tmp" "$binary"
fi

# New inputs go to the build directory's corpus; the committed seeds are only read.
mkdir -p "$out/corpus" "$out/artifacts"
# libFuzzer reports crashes with exit code 77 by default, which CTest would take for "skipped".
exec "$binary" \
    -max_total_time="$seconds" \
    -max_len="$max_len" \
    -timeout=10 \
    -rss_limit_mb=2048 \
    -error_exitcode=1 \
    -timeout_exitcode=2 \
    -print_final_stats=1 \
    -dict="$here/$target.dict" \
    -artifact_prefix="$out/artifacts/" \
    "$@" \
    "$out/corpus" "$here/corpus/$target"
