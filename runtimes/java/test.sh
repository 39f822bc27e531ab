#!/bin/sh
# Builds the Java runtime and runs its tests, the conformance suite included.
#   runtimes/java/test.sh            (from any directory)
# Builds the library with build.sh (build/sessionpolicy-VERSION.jar, its sources jar and POM),
# compiles the tests against that jar in a folder of this run's own (removed at the end), runs
# JUnit 5, prints "envelope vectors: N passed, N failed" (the signed-machine vectors,
# envelopes.jsonl and keys.jsonl) and "conformance vectors: N passed, N failed" last, and exits
# non-zero on any failure. Needs a JDK (11 or later) and JUnit 5's console launcher (Debian:
# apt-get install -y default-jdk-headless junit5). The library itself has no dependency.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
spec="${SESSIONPOLICY_CONFORMANCE:-$here/../../spec/conformance}"
junit="${JUNIT_CONSOLE_JAR:-/usr/share/java/junit-platform-console-standalone.jar}"

missing=""
for tool in javac java jar; do
    command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
done
if [ -n "$missing" ]; then
    echo "error: not found:$missing. Install a JDK 11 or later (Debian: apt-get install -y default-jdk-headless)." >&2
    exit 2
fi
if [ ! -f "$junit" ]; then
    echo "error: JUnit 5's console launcher is not at $junit." >&2
    echo "  Install it (Debian: apt-get install -y junit5) or set JUNIT_CONSOLE_JAR to its path." >&2
    exit 2
fi
if [ ! -d "$spec/machines" ] || [ ! -d "$spec/vectors" ]; then
    echo "error: the conformance suite is not at $spec (machines/ and vectors/)." >&2
    exit 2
fi

echo "== building the library (build.sh: --release 11)"
"$here/build.sh"
library="$here/build/sessionpolicy-$(cat "$here/../../VERSION").jar"

# This run's own folder: test classes, summaries, Kotlin's output. Another run's stays untouched.
mkdir -p "$here/build"
build=$(mktemp -d "$here/build/.test.XXXXXX")
trap 'rm -rf "$build"' EXIT INT TERM
mkdir -p "$build/compile-only" "$build/test-classes"
# The library copied into this run's folder, so that a build.sh of another command meanwhile
# does not change the jar under these tests.
cp "$library" "$build/sessionpolicy.jar"

echo "== compiling the tests"
# AndroidX's nullability annotations, compile-time only.
javac --release 11 -encoding UTF-8 -d "$build/compile-only" $(find "$here/compile-only" -name '*.java')
find "$here/test" -name '*.java' > "$build/test-sources.txt"
javac --release 11 -encoding UTF-8 -d "$build/test-classes" -cp "$build/sessionpolicy.jar:$build/compile-only:$junit" @"$build/test-sources.txt"

echo "== running the tests"
summary="$build/conformance-summary.txt"
envelope_summary="$build/envelope-summary.txt"
status=0
java -Dconformance.dir="$spec" -Dconformance.summary="$summary" -Denvelope.summary="$envelope_summary" -jar "$junit" \
    -cp "$build/test-classes:$build/sessionpolicy.jar" --scan-classpath --disable-banner --details=tree || status=$?

# Kotlin, when kotlinc is installed (Debian: apt-get install -y kotlin; CI installs it): the API
# as a Kotlin app uses it compiles and runs, and Kotlin sees @Nullable accessors as nullable
# types (NullMisuse.kt must not compile).
if command -v kotlinc >/dev/null 2>&1; then
    echo "== Kotlin: kotlin/Usage.kt compiles and runs; kotlin/NullMisuse.kt is refused"
    if kotlinc "$here/kotlin/Usage.kt" -cp "$build/sessionpolicy.jar" -include-runtime -d "$build/usage.jar" 2>"$build/kotlinc.log" \
        && java -cp "$build/usage.jar:$build/sessionpolicy.jar" UsageKt "$spec/machines/kobil-offline-token.json"; then
        :
    else
        grep -v "warning" "$build/kotlinc.log" >&2
        echo "Kotlin usage failed" >&2
        status=1
    fi
    if kotlinc "$here/kotlin/NullMisuse.kt" -cp "$build/sessionpolicy.jar" -d "$build/misuse" 2>"$build/misuse.log"; then
        echo "kotlin/NullMisuse.kt compiled: Kotlin does not see the runtime's nullable types" >&2
        status=1
    elif ! grep -q "type mismatch" "$build/misuse.log"; then
        cat "$build/misuse.log" >&2
        echo "kotlin/NullMisuse.kt failed for another reason than nullability" >&2
        status=1
    fi
elif [ -n "${CI:-}" ]; then
    echo "kotlinc not found: CI needs it for the Kotlin check (Debian: apt-get install -y kotlin)" >&2
    status=1
fi

if [ -f "$envelope_summary" ]; then
    echo "envelope vectors: $(cat "$envelope_summary")"
    case "$(cat "$envelope_summary")" in
        *" 0 failed") ;;
        *) status=1 ;;
    esac
else
    echo "envelope vectors: not run" >&2
    status=1
fi
if [ -f "$summary" ]; then
    echo "conformance vectors: $(cat "$summary")"
    case "$(cat "$summary")" in
        *" 0 failed") ;;
        *) status=1 ;;
    esac
else
    echo "conformance vectors: not run" >&2
    status=1
fi
if [ "$status" -ne 0 ]; then
    echo "FAILED" >&2
fi
exit "$status"
