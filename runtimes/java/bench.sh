#!/bin/sh
# Runs the evaluation benchmark of the Java runtime (not a test):
#   runtimes/java/bench.sh [ROUNDS] [EVALUATIONS_PER_ROUND]      (from any directory)
# Compiles the library (--release 11) and bench/, then prints the median ns per evaluation per
# case and overall, and bytes allocated per evaluation, for every shipped machine.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
for tool in javac java; do
    command -v "$tool" >/dev/null 2>&1 || { echo "error: $tool not found: install a JDK 11 or later" >&2; exit 2; }
done
out="$here/build/bench"
rm -rf "$out"
mkdir -p "$out"
javac --release 11 -encoding UTF-8 -d "$out" $(find "$here/compile-only" "$here/src" "$here/bench" -name '*.java')
exec java -Xms512m -Xmx512m -cp "$out" dev.sessionpolicy.Bench "$here/../../spec/conformance" "$@"
