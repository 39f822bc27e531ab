#!/bin/sh
# Builds the Java runtime's release files, without running the tests:
#   runtimes/java/build.sh                   (from any directory)
#   OUT=/some/folder runtimes/java/build.sh  (another output folder; default runtimes/java/build)
# Writes, with VERSION the repository's VERSION file:
#   sessionpolicy-VERSION.jar          the library (Java 11 bytecode, --release 11), with
#                                      LICENSE and NOTICE in META-INF
#   sessionpolicy-VERSION-sources.jar  its sources
#   sessionpolicy-VERSION.pom          Maven coordinates dev.sessionpolicy:sessionpolicy-runtime:VERSION,
#                                      no dependencies
# and prints their paths. Everything is compiled in a folder of this run's own and moved into
# OUT at the end, each file by a rename: a build another command is using (test.sh's, a
# benchmark's, a JVM that has the jar open) is never removed or seen half-written. Needs a JDK
# 11 or later (Debian: apt-get install -y default-jdk-headless).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out="${OUT:-$here/build}"

for tool in javac jar; do
    command -v "$tool" >/dev/null 2>&1 || {
        echo "error: $tool not found: install a JDK 11 or later (Debian: apt-get install -y default-jdk-headless)" >&2
        exit 2
    }
done
version=$(cat "$root/VERSION")
case "$version" in
    [0-9]*.[0-9]*.[0-9]*) ;;
    *) echo "error: $root/VERSION does not hold a version (found \`$version\`)" >&2; exit 2 ;;
esac

mkdir -p "$out"
work=$(mktemp -d "$out/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

# AndroidX's nullability annotations, compile-time only (compile-only/: not in the jar).
mkdir -p "$work/compile-only" "$work/classes/META-INF" "$work/sources/META-INF"
javac --release 11 -encoding UTF-8 -d "$work/compile-only" $(find "$here/compile-only" -name '*.java')
find "$here/src" -name '*.java' > "$work/sources.txt"
javac --release 11 -Xlint:all -Werror -encoding UTF-8 -cp "$work/compile-only" -d "$work/classes" @"$work/sources.txt"

cp "$root/LICENSE" "$root/NOTICE" "$work/classes/META-INF/"
cp "$root/LICENSE" "$root/NOTICE" "$work/sources/META-INF/"
cat > "$work/MANIFEST.MF" <<EOF
Automatic-Module-Name: dev.sessionpolicy
Implementation-Title: SessionPolicy runtime
Implementation-Version: $version
Implementation-Vendor: The SessionPolicy authors
EOF

jar="sessionpolicy-$version.jar"
sources="sessionpolicy-$version-sources.jar"
pom="sessionpolicy-$version.pom"
jar --create --file "$work/$jar" --manifest "$work/MANIFEST.MF" -C "$work/classes" .
jar --create --file "$work/$sources" -C "$work/sources" META-INF -C "$here/src" .
cat > "$work/$pom" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0"
         xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
         xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 https://maven.apache.org/xsd/maven-4.0.0.xsd">
  <modelVersion>4.0.0</modelVersion>
  <groupId>dev.sessionpolicy</groupId>
  <artifactId>sessionpolicy-runtime</artifactId>
  <version>$version</version>
  <packaging>jar</packaging>
  <name>SessionPolicy runtime</name>
  <description>Loads a compiled session policy (sessionpolicy-machine/1) and decides exactly as the Swift engine. Java 11, Android API 26+, no dependencies.</description>
  <licenses>
    <license>
      <name>Apache-2.0</name>
      <url>https://www.apache.org/licenses/LICENSE-2.0.txt</url>
    </license>
  </licenses>
  <properties>
    <maven.compiler.release>11</maven.compiler.release>
  </properties>
</project>
EOF

for f in "$jar" "$sources" "$pom"; do
    mv -f "$work/$f" "$out/$f"
    echo "$out/$f ($(wc -c < "$out/$f") bytes)"
done
