#!/usr/bin/env bash
# Instructions per evaluation of the core at a checkout (default: this one), by callgrind:
# builds the core as a library with `swiftc -O -wmo`, runs a driver's loop at N = 10,000 and
# 20,000 and prints the difference divided by 10,000.
# Usage: [OUT=DIR] Benchmarks/callgrind/run.sh [ROOT] [main|background|in-place|background-in-place|codec]
#   main:  main.swift, one evaluation (the default): a launch that passes all 20 guards of its chain
#   background: main.swift with `background`, one `background` evaluation: the shortest chain, the fixed cost
#   in-place, background-in-place: the same through `evaluate(&state, event)`, which updates the
#          caller's state and returns a `Verdict` (each iteration starts from a copy of the state)
#   OUT=DIR keeps the library, the driver and the callgrind files (cg.10000, cg.20000) in DIR, for
#          callgrind_annotate; by default they go to a temporary folder.
#   codec: codec.swift, one evaluation request read by the fast reader, evaluated, and its
#          outcome written by the fast writer
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=${1:-$here/../..}
driver=${2:-main}
out=${OUT:-$(mktemp -d)}; mkdir -p "$out"
# The codec driver needs the wire codec, in its own target (`Sources/SessionPolicyJSON`) since
# issue 33: its files are compiled into the same one module here (their `import SessionPolicy`
# is then ignored, with a warning), so that older checkouts, where it was in the core, compare.
sources=("$root/Sources/SessionPolicy")
[ "$driver" = codec ] && [ -d "$root/Sources/SessionPolicyJSON" ] && sources+=("$root/Sources/SessionPolicyJSON")
swiftc -O -wmo -package-name callgrind -module-name SessionPolicy -parse-as-library \
  -emit-module -emit-module-path "$out/SessionPolicy.swiftmodule" -emit-library -o "$out/libSessionPolicy.so" \
  $(find "${sources[@]}" -name '*.swift')
source=$driver; mode=""
case $driver in
  background) source=main; mode=background ;;
  in-place) source=main; mode=in-place ;;
  background-in-place) source=main; mode="background in-place" ;;
esac
swiftc -O -package-name callgrind "$here/$source.swift" -I "$out" -L "$out" -lSessionPolicy -Xlinker -rpath -Xlinker "$out" -o "$out/driver"
count() { valgrind --tool=callgrind --callgrind-out-file="$out/cg.$1" "$out/driver" "$1" $mode 2>&1 | sed -n 's/.*Collected : //p'; }
a=$(count 10000); b=$(count 20000)
echo "instructions per iteration ($driver): $(( (b - a) / 10000 ))"
