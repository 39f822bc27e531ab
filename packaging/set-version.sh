#!/bin/sh
# Sets the version of every artifact:
#   packaging/set-version.sh 0.3.0            (from any directory)
# The VERSION file at the repository root is the one source; what cannot read it holds a copy,
# and this script writes each:
#   VERSION                                         0.3.0
#   Sources/SessionPolicy/SessionPolicyRelease.swift  SessionPolicyRelease.version, which
#                                                   policyctl, policyctl-serve and
#                                                   policyctl-sessions print for --version
#   runtimes/js/package.json                        "version" (npm pack)
#   CHANGELOG.md                                    the newest heading: an "## X.Y.Z (unreleased)"
#                                                   heading is renamed, a released one gets a new
#                                                   "## 0.3.0 (unreleased)" above it
# The jar, its POM and the Debian package read VERSION when they are built
# (runtimes/java/build.sh, packaging/build.sh). VersionTests (swift test --filter VersionTests)
# fails when one of these disagrees. POSIX sh and sed, so it runs on macOS too.
set -eu
cd "$(dirname "$0")/.."

new=${1:-}
if ! printf '%s\n' "$new" | grep -Eq '^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$'; then
    echo "usage: packaging/set-version.sh MAJOR.MINOR.PATCH[-PRERELEASE]   (now: $(cat VERSION))" >&2
    exit 64
fi
old=$(cat VERSION)

# rewrite FILE SED-SCRIPT: FILE through sed, replaced only when it changed.
rewrite() {
    sed -E "$2" "$1" > "$1.tmp"
    if cmp -s "$1" "$1.tmp"; then rm -f "$1.tmp"; else mv "$1.tmp" "$1"; fi
}

printf '%s\n' "$new" > VERSION
rewrite Sources/SessionPolicy/SessionPolicyRelease.swift \
    "s/^(    public static let version = \")[^\"]*(\")$/\\1$new\\2/"
# The package's own version: the top-level member, two spaces in.
rewrite runtimes/js/package.json "s/^(  \"version\": \")[^\"]*(\",?)$/\\1$new\\2/"
awk -v new="$new" '
    !done && /^## / {
        if ($0 ~ /\(unreleased\)/) { print "## " new " (unreleased)" }
        else { print "## " new " (unreleased)"; print ""; print }
        done = 1; next
    }
    { print }
' CHANGELOG.md > CHANGELOG.md.tmp
mv CHANGELOG.md.tmp CHANGELOG.md

# Each place now says the new version, or this script no longer knows how to write it.
grep -q "public static let version = \"$new\"" Sources/SessionPolicy/SessionPolicyRelease.swift \
    || { echo "error: Sources/SessionPolicy/SessionPolicyRelease.swift was not updated" >&2; exit 1; }
grep -q "^  \"version\": \"$new\"" runtimes/js/package.json \
    || { echo "error: runtimes/js/package.json was not updated" >&2; exit 1; }
grep -q "^## $new (unreleased)$" CHANGELOG.md || { echo "error: CHANGELOG.md was not updated" >&2; exit 1; }
echo "$old -> $new: VERSION, Sources/SessionPolicy/SessionPolicyRelease.swift, runtimes/js/package.json, CHANGELOG.md"
