#!/usr/bin/env bash
# Builds SessionPolicy's release artifacts, all of the version in the VERSION file, into $OUT
# (default: .build-packages/ at the repository root):
#
#   sessionpolicy-VERSION-linux-x86_64.tar.gz  bin/policyctl, bin/policyctl-serve, bin/policyctl-sessions
#                                              (release builds, the Swift standard library and
#                                              Foundation linked statically), man/man1/ (their
#                                              manual pages), policies/, README.md, CHANGELOG.md,
#                                              LICENSE, NOTICE, PACKAGES.md (docs/packages.md)
#   sessionpolicy_VERSION_amd64.deb            the three binaries in /usr/bin (manual pages too), the systemd unit
#                                              sessionpolicy.service, /etc/sessionpolicy/ (the
#                                              configuration, the secrets, the policies)
#   sessionpolicy-VERSION.jar, sessionpolicy-VERSION-sources.jar, sessionpolicy-VERSION.pom
#                                              the Java runtime (runtimes/java/build.sh)
#   sessionpolicy-runtime-VERSION.tgz          the JavaScript runtime (`npm pack` in runtimes/js)
#   SHA256SUMS                                 the SHA-256 of each of them (`sha256sum -c SHA256SUMS`)
#
# It checks what it builds, and stops at the first problem: each binary prints VERSION for
# --version and links no Swift library (ldd); the systemd unit passes `systemd-analyze verify`;
# lintian finds no error in the .deb; every artifact carries VERSION. docs/packages.md says how
# to install each.
#
#   bash packaging/build.sh                       (from any directory)
#   OUT=/tmp/release bash packaging/build.sh
#
# Needs Swift 6.1+ with its static SDK parts (lib/swift_static, in the Linux toolchains),
# libyaml-dev and libsqlite3-dev, dpkg-dev (dpkg-shlibdeps), binutils (strip), a JDK 11+, npm,
# and for the checks systemd (systemd-analyze) and lintian. Without systemd-analyze or lintian
# those checks are skipped with a note, unless CI is set. Linux x86_64 only.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
started=$SECONDS
step() { echo "== [$(( SECONDS - started ))s] $*"; }
fail() { echo "packaging: FAILED: $*" >&2; exit 1; }

VERSION=$(cat VERSION)
[[ $VERSION =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] || fail "VERSION holds \`$VERSION\`, not a version"
[ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ] || fail "builds on Linux x86_64 only (this is $(uname -s)-$(uname -m))"
for tool in swift strip ldd dpkg-deb dpkg-shlibdeps javac jar npm node unzip sha256sum; do
  command -v "$tool" >/dev/null 2>&1 || fail "$tool not found"
done
OUT=${OUT:-$ROOT/.build-packages}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
MAINTAINER=${MAINTAINER:-"SessionPolicy maintainers <maintainers@sessionpolicy.dev>"}
# Every date written (files in the archives, the Debian changelog) is the last commit's, so that
# two builds of one commit give the same archives.
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
export SOURCE_DATE_EPOCH
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
BINARIES=(policyctl policyctl-serve policyctl-sessions)
TARBALL=sessionpolicy-$VERSION-linux-x86_64.tar.gz
DEB=sessionpolicy_${VERSION}_amd64.deb
JAR=sessionpolicy-$VERSION.jar
NPM=sessionpolicy-runtime-$VERSION.tgz
echo "SessionPolicy $VERSION -> $OUT"

# ---------------------------------------------------------------------------------------------
step "release builds, the Swift standard library and Foundation linked statically"
# policyctl is the root package's; the other two are the server package's (Server/). SwiftPM
# puts -static-stdlib on every Swift compile command, not only the link: a release build made
# without the flag is compiled again. So .ci/run makes its release builds of policyctl with it
# (`swift run -c release --static-swift-stdlib policyctl ...`), and here only the server's is new.
swift build -c release --static-swift-stdlib --product policyctl
swift build -c release --static-swift-stdlib --package-path Server --product policyctl-serve
swift build -c release --static-swift-stdlib --package-path Server --product policyctl-sessions
mkdir -p "$WORK/bin"
cp "$(swift build -c release --show-bin-path)/policyctl" "$WORK/bin/"
server_bin=$(swift build -c release --package-path Server --show-bin-path)
cp "$server_bin/policyctl-serve" "$server_bin/policyctl-sessions" "$WORK/bin/"

step "the binaries: stripped, no Swift library linked, --version prints $VERSION"
for b in "${BINARIES[@]}"; do
  f=$WORK/bin/$b
  before=$(stat -c %s "$f")
  # As Debian's dh_strip does: the symbol table and debug information out (the unstripped
  # binary stays in the build folder).
  strip --strip-all "$f"
  libs=$(ldd "$f" | awk '{print $1}' | sort | tr '\n' ' ')
  if ldd "$f" | grep -Eq 'libswift|libFoundation|lib_Foundation|libdispatch|libBlocksRuntime|not found'; then
    ldd "$f" >&2
    fail "$b links a Swift library or one that is missing (above)"
  fi
  got=$("$f" --version) || fail "$b --version failed"
  [ "$got" = "$VERSION" ] || fail "$b --version prints \`$got\`, VERSION is $VERSION"
  echo "   $b: $(( before / 1048576 )) MiB built, $(( $(stat -c %s "$f") / 1048576 )) MiB stripped; links $libs"
done

# Manual pages, from what each program says of itself (packaging/manpage.mjs).
mkdir -p "$WORK/man"
man_date=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%d)
for b in "${BINARIES[@]}"; do
  "$WORK/bin/$b" --experimental-dump-help | node packaging/manpage.mjs "$VERSION" "$man_date" > "$WORK/man/$b.1"
done

# ---------------------------------------------------------------------------------------------
step "$TARBALL"
T=$WORK/tar/sessionpolicy-$VERSION-linux-x86_64
mkdir -p "$T/bin" "$T/policies"
cp "${BINARIES[@]/#/$WORK/bin/}" "$T/bin/"
mkdir -p "$T/man/man1"
cp "$WORK"/man/*.1 "$T/man/man1/"
cp policies/*.yaml "$T/policies/"
cp README.md CHANGELOG.md LICENSE NOTICE "$T/"
cp docs/packages.md "$T/PACKAGES.md"
chmod -R u+rwX,go+rX,go-w "$T"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
  -C "$WORK/tar" -cf - "$(basename "$T")" | gzip -6n > "$WORK/$TARBALL"

# ---------------------------------------------------------------------------------------------
step "$DEB"
D=$WORK/deb
doc=$D/usr/share/doc/sessionpolicy
mkdir -p "$D/DEBIAN" "$D/usr/bin" "$D/lib/systemd/system" "$D/etc/sessionpolicy/policies" "$doc"
cp "${BINARIES[@]/#/$WORK/bin/}" "$D/usr/bin/"
install -m 0644 packaging/debian/sessionpolicy.service "$D/lib/systemd/system/"
install -m 0644 packaging/debian/sessionpolicy.env "$D/etc/sessionpolicy/"
install -m 0600 packaging/debian/secrets.env "$D/etc/sessionpolicy/"
install -m 0644 policies/*.yaml "$D/etc/sessionpolicy/policies/"
install -m 0644 docs/packages.md NOTICE "$doc/"
mkdir -p "$D/usr/share/man/man1"
for b in "${BINARIES[@]}"; do gzip -9n < "$WORK/man/$b.1" > "$D/usr/share/man/man1/$b.1.gz"; done
chmod 0644 "$D"/usr/share/man/man1/*
# Why the package differs from what lintian expects, where it must (each line says why).
install -D -m 0644 packaging/debian/lintian-overrides "$D/usr/share/lintian/overrides/sessionpolicy"
# The Debian changelog of this native package, and the project's own.
date_822=$(date -u -R -d "@$SOURCE_DATE_EPOCH")
printf 'sessionpolicy (%s) unstable; urgency=medium\n\n  * SessionPolicy %s: see CHANGELOG.md.gz in this folder.\n\n -- %s  %s\n' \
  "$VERSION" "$VERSION" "$MAINTAINER" "$date_822" | gzip -9n > "$doc/changelog.gz"
gzip -9n < CHANGELOG.md > "$doc/CHANGELOG.md.gz"
# The copyright file in Debian's machine-readable format: the Apache License 2.0 is in
# /usr/share/common-licenses on every Debian system; NOTICE lists what the binaries contain.
{
  printf 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n'
  printf 'Upstream-Name: SessionPolicy\n'
  printf 'Upstream-Contact: %s\n' "$MAINTAINER"
  printf 'Comment:\n'
  sed -e 's/^$/./' -e 's/^/ /' NOTICE
  printf '\nFiles: *\nCopyright: 2026 The SessionPolicy authors\nLicense: Apache-2.0\n\n'
  printf 'License: Apache-2.0\n'
  printf ' Licensed under the Apache License, Version 2.0 (the "License"); you may not\n'
  printf ' use this file except in compliance with the License. You may obtain a copy of\n'
  printf ' the License at https://www.apache.org/licenses/LICENSE-2.0\n .\n'
  printf ' Unless required by applicable law or agreed to in writing, software\n'
  printf ' distributed under the License is distributed on an "AS IS" BASIS, WITHOUT\n'
  printf ' WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the\n'
  printf ' License for the specific language governing permissions and limitations under\n'
  printf ' the License.\n .\n'
  printf ' On Debian systems, the complete text of the Apache License, Version 2.0 can be\n'
  printf ' found in "/usr/share/common-licenses/Apache-2.0".\n'
} > "$doc/copyright"
chmod 0644 "$doc"/*
for script in postinst prerm postrm; do install -m 0755 "packaging/debian/$script" "$D/DEBIAN/"; done
(cd "$D" && find etc -type f | sort | sed 's|^|/|') > "$D/DEBIAN/conffiles"
(cd "$D" && find usr lib -type f | sort | xargs md5sum) > "$D/DEBIAN/md5sums"
# The shared libraries the binaries need (libc, libstdc++, libyaml, SQLite...), as Debian
# packages, with the versions this build needs.
mkdir -p "$WORK/shlibs/debian"
printf 'Source: sessionpolicy\n\nPackage: sessionpolicy\nArchitecture: amd64\n' > "$WORK/shlibs/debian/control"
depends=$(cd "$WORK/shlibs" && dpkg-shlibdeps -O "${BINARIES[@]/#/$D/usr/bin/}" 2>"$WORK/shlibdeps.log" | sed -n 's/^shlibs:Depends=//p') \
  || { cat "$WORK/shlibdeps.log" >&2; fail "dpkg-shlibdeps failed"; }
[ -n "$depends" ] || { cat "$WORK/shlibdeps.log" >&2; fail "dpkg-shlibdeps found no dependency"; }
installed_size=$(du -sk --exclude=DEBIAN "$D" | cut -f1)
sed -e "s|@VERSION@|$VERSION|" -e "s|@MAINTAINER@|$MAINTAINER|" -e "s|@INSTALLED_SIZE@|$installed_size|" \
  -e "s|@DEPENDS@|$depends|" packaging/debian/control > "$D/DEBIAN/control"
echo "   Depends: $depends"
find "$D" -type d -exec chmod 0755 {} +
find "$D" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
# gzip, not dpkg's default xz: on two cores xz -6 takes 6 minutes for a third less (98 MB -> 65 MB).
dpkg-deb --root-owner-group -Zgzip -z6 --build "$D" "$WORK/$DEB" >/dev/null

step "checks of the .deb: systemd-analyze verify, lintian"
if command -v systemd-analyze >/dev/null 2>&1; then
  # verify wants the programs the unit runs where it names them, and this machine has no
  # /usr/bin/policyctl-serve yet: it reads a copy whose ExecStart names the packaged binary
  # (packaging/test-deb.sh verifies the installed unit as it is).
  mkdir -p "$WORK/verify"
  sed "s|^ExecStart=/usr/bin/|ExecStart=$D/usr/bin/|" packaging/debian/sessionpolicy.service > "$WORK/verify/sessionpolicy.service"
  SYSTEMD_LOG_LEVEL=notice systemd-analyze verify "$WORK/verify/sessionpolicy.service" \
    || fail "systemd-analyze verify refuses the unit (above)"
  echo "   systemd-analyze verify: clean"
elif [ -n "${CI:-}" ]; then
  fail "systemd-analyze not found (Debian: apt-get install -y systemd)"
else
  echo "   systemd-analyze not found: not verified"
fi
if command -v lintian >/dev/null 2>&1; then
  lintian_status=0
  # (Not --show-overrides: with it, an overridden error fails the run too.)
  lintian --fail-on error "$WORK/$DEB" > "$WORK/lintian.log" 2>&1 || lintian_status=$?
  sed 's/^/   /' "$WORK/lintian.log"
  if [ "$lintian_status" != 0 ]; then
    cp "$WORK/$DEB" "$OUT/$DEB.refused"
    fail "lintian exits $lintian_status on $DEB (above; the package is kept as $OUT/$DEB.refused)"
  fi
  echo "   lintian: $(grep -c '^E:' "$WORK/lintian.log" || true) errors, $(grep -c '^W:' "$WORK/lintian.log" || true) warnings," \
    "$(grep -c '^sessionpolicy:' packaging/debian/lintian-overrides || true) tags overridden (why: packaging/debian/lintian-overrides)"
elif [ -n "${CI:-}" ]; then
  fail "lintian not found (Debian: apt-get install -y lintian)"
else
  echo "   lintian not found: not checked"
fi

# ---------------------------------------------------------------------------------------------
step "$JAR, its sources jar and POM (runtimes/java/build.sh)"
OUT="$WORK" runtimes/java/build.sh | sed 's/^/   /'

step "$NPM (npm pack in runtimes/js)"
(cd runtimes/js && npm pack --silent --pack-destination "$WORK" >/dev/null)

# ---------------------------------------------------------------------------------------------
step "every artifact says $VERSION"
[ "$(dpkg-deb -f "$WORK/$DEB" Version)" = "$VERSION" ] || fail "$DEB: Version is not $VERSION"
unzip -p "$WORK/$JAR" META-INF/MANIFEST.MF | tr -d '\r' | grep -qx "Implementation-Version: $VERSION" \
  || fail "$JAR: the manifest's Implementation-Version is not $VERSION"
grep -q "<version>$VERSION</version>" "$WORK/sessionpolicy-$VERSION.pom" || fail "the POM's version is not $VERSION"
npm_version=$(tar -xzOf "$WORK/$NPM" package/package.json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).version))')
[ "$npm_version" = "$VERSION" ] || fail "$NPM: version $npm_version"
tar -tzf "$WORK/$NPM" | grep -qx 'package/sessionpolicy.d.ts' || fail "$NPM has no type declarations"
tar -xzOf "$WORK/$TARBALL" "sessionpolicy-$VERSION-linux-x86_64/bin/policyctl" > "$WORK/policyctl-from-tarball"
chmod +x "$WORK/policyctl-from-tarball"
[ "$("$WORK/policyctl-from-tarball" --version)" = "$VERSION" ] || fail "$TARBALL: policyctl --version is not $VERSION"

ARTIFACTS=("$TARBALL" "$DEB" "$JAR" "sessionpolicy-$VERSION-sources.jar" "sessionpolicy-$VERSION.pom" "$NPM")
for a in "${ARTIFACTS[@]}"; do mv -f "$WORK/$a" "$OUT/$a"; done
(cd "$OUT" && sha256sum "${ARTIFACTS[@]}" > SHA256SUMS && sha256sum --quiet -c SHA256SUMS)
step "done: $OUT"
(cd "$OUT" && ls -l "${ARTIFACTS[@]}" SHA256SUMS | awk '{printf "   %10d  %s\n", $5, $9}')
