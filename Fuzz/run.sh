#!/usr/bin/env bash
# Builds a fuzz target (libFuzzer and AddressSanitizer, release), seeds its corpus from the
# repository's own files and runs it:
#   bash Fuzz/run.sh TARGET [SECONDS] [libFuzzer options...]
# TARGET: FuzzPolicy, FuzzScenarios, FuzzMachine, FuzzStateEvent, FuzzRequestBody. SECONDS
# (default 60) is -max_total_time; give 0 and -runs=N for a count of executions instead. The corpus grows in
# .build-fuzz/corpus/TARGET and is kept between runs; a crash is written as
# .build-fuzz/crashes/TARGET/crash-... (replay it: .build-fuzz/release/TARGET FILE). Not in
# .build-fuzz/artifacts, which is SwiftPM's own (a build of another target may clear it).
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: bash Fuzz/run.sh TARGET [SECONDS] [libFuzzer options...]}
seconds=${2:-60}
shift $(( $# >= 2 ? 2 : 1 ))
swift build --package-path Fuzz --scratch-path .build-fuzz -c release --product "$target" \
  --sanitize fuzzer --sanitize address -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library 2>&1 | grep -E "error|warning: |Compiling|Build" | grep -v "^\[" || true
bin=.build-fuzz/release/$target
[ -x "$bin" ] || { echo "the build of $target failed" >&2; exit 1; }
corpus=.build-fuzz/corpus/$target seeds=.build-fuzz/seeds/$target artifacts=.build-fuzz/crashes/$target
mkdir -p "$corpus" "$artifacts"
rm -rf "$seeds"
node Fuzz/seeds.mjs "$target" "$seeds" ".build-fuzz/$target.dict"
limit=()
[ "$seconds" != 0 ] && limit=(-max_total_time="$seconds")
# Inputs up to 64 KiB; a machine document is 140-210 KB (every built-in guard of every state and
# event), its envelope a third more: FuzzMachine takes up to 320 KiB.
max_len=65536
[ "$target" = FuzzMachine ] && max_len=327680
# AddressSanitizer records no allocation stacks and keeps a small quarantine: it halves the
# time of an execution (the readers allocate a lot); replay a crash without these to see the
# stacks: ASAN_OPTIONS= .build-fuzz/release/TARGET CRASH_FILE.
# Swift's own crash reporter is off: libFuzzer reports the crash and saves the input.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS=${ASAN_OPTIONS-malloc_context_size=0:quarantine_size_mb=16}
# Leaks are checked (AddressSanitizer's leak checker runs at exit and on every -runs end); a
# run of more than 10 s for one input is a hang.
exec "$bin" "$corpus" "$seeds" -dict=".build-fuzz/$target.dict" -artifact_prefix="$artifacts/" \
  -timeout=10 -max_len="$max_len" -rss_limit_mb=4096 -print_final_stats=1 "${limit[@]}" "$@"
