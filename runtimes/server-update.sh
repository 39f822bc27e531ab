#!/usr/bin/env bash
# The Java and JavaScript MachineUpdaters take their machine from a running policyctl-serve, as
# the Swift one does in Server/Tests/SessionPolicyServerTests/SignedMachineTests.swift:
#   bash runtimes/server-update.sh             (from any directory)
#   BIN=/path/to/bin bash runtimes/server-update.sh   (a folder holding policyctl-serve: no build)
# Starts policyctl-serve with the conformance suite's test key a (--signing-key), a temporary copy
# of policies/spendiq.yaml, SQLite in a temporary folder and --reload-interval 0.1; fetches
# GET /v1/policies/spendiq/machine with curl (200, application/jose, an ETag; 304 and no body for
# If-None-Match: that ETag): envelope-1; changes the policy's offline window (7d -> 6d), waits
# for the served envelope to change: envelope-2. Then runtimes/js/server-update.mjs and
# runtimes/java/server-update/ServerUpdate.java (compiled --release 11 against the runtime built
# here) each check, with keys a and b pinned: envelope-1 installs its machine; again: unchanged;
# a payload character changed: bad-signature; the signature stripped: signature-missing; truncated:
# envelope-malformed (the machine held stays each time); pinned to key b only: unpinned-key;
# envelope-2 installs (larger serial, another machine); envelope-1 then: rollback (envelope-2's
# machine stays); the held machine decides a launch. Exits non-zero on any failure.
# Needs curl, node, a JDK 11+, and Swift unless BIN is given.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
KEYS=$ROOT/spec/conformance/keys
WORK=$(mktemp -d)
PID=
cleanup() {
  if [ -n "$PID" ]; then kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() { echo "server-update: FAILED: $*" >&2; exit 1; }
for tool in curl node javac java; do command -v "$tool" >/dev/null 2>&1 || fail "$tool not found"; done

if [ -z "${BIN:-}" ]; then
  echo "== building policyctl-serve"
  swift build --package-path Server --product policyctl-serve >"$WORK/build.log" 2>&1 || { tail -40 "$WORK/build.log" >&2; fail "the server did not build"; }
  BIN=$(swift build --package-path Server --show-bin-path)
fi
[ -x "$BIN/policyctl-serve" ] || fail "no policyctl-serve in $BIN"

echo "== starting policyctl-serve (--signing-key a.key.pem, a copy of policies/spendiq.yaml, SQLite, --reload-interval 0.1)"
mkdir -p "$WORK/policies"
cp policies/spendiq.yaml "$WORK/policies/spendiq.yaml"
SESSIONPOLICY_HS256_SECRET=server-update-secret-0123456789abcdef SESSIONPOLICY_LOG_LEVEL=error \
  "$BIN/policyctl-serve" --port 0 --policies "$WORK/policies" --storage "sqlite:$WORK/store.sqlite" \
  --signing-key "$KEYS/a.key.pem" --reload-interval 0.1 >"$WORK/serve.out" 2>"$WORK/serve.log" &
PID=$!
PORT=
for _ in $(seq 100); do
  PORT=$(sed -n 's|^listening on http://[^:]*:\([0-9][0-9]*\)$|\1|p' "$WORK/serve.out" | head -1)
  [ -n "$PORT" ] && break
  kill -0 "$PID" 2>/dev/null || { cat "$WORK/serve.log" >&2; fail "the server exited"; }
  sleep 0.1
done
[ -n "$PORT" ] || { cat "$WORK/serve.log" >&2; fail "the server did not print its port"; }
URL="http://127.0.0.1:$PORT/v1/policies/spendiq/machine"
echo "   $URL"

# GET URL [curl args...] -> the body in $WORK/body, the headers in $WORK/headers, the status echoed.
# (curl writes no file for an empty body: the old one is removed first, and an absent one is empty.)
get() { rm -f "$WORK/body"; curl -s -o "$WORK/body" -D "$WORK/headers" -w '%{http_code}' "$@" "$URL"; touch "$WORK/body"; }
header() { grep -i "^$1:" "$WORK/headers" | head -1 | sed 's/^[^:]*:[[:space:]]*//' | tr -d '\r'; }

echo "== fetching envelope-1"
status=$(get)
[ "$status" = 200 ] || fail "GET answered $status: $(cat "$WORK/body")"
type=$(header content-type)
[ "$type" = application/jose ] || fail "Content-Type is '$type', not application/jose"
etag=$(header etag)
[ -n "$etag" ] || fail "no ETag"
[ -s "$WORK/body" ] || fail "an empty envelope"
cp "$WORK/body" "$WORK/envelope-1"
echo "   200, application/jose, ETag $etag, $(wc -c <"$WORK/envelope-1") bytes"
status=$(get -H "If-None-Match: $etag")
[ "$status" = 304 ] || fail "If-None-Match: $etag answered $status, not 304"
[ ! -s "$WORK/body" ] || fail "the 304 has a body ($(wc -c <"$WORK/body") bytes)"
echo "   If-None-Match: that ETag -> 304, no body"

echo "== changing the policy (offline window 7d -> 6d) and waiting for a new envelope"
sed '/^ *window: 7d/s/7d/6d/' policies/spendiq.yaml >"$WORK/spendiq.yaml"
! cmp -s policies/spendiq.yaml "$WORK/spendiq.yaml" || fail "no offline window line 'window: 7d' in policies/spendiq.yaml"
mv "$WORK/spendiq.yaml" "$WORK/policies/spendiq.yaml"
changed=
started=$(date +%s%N)
for _ in $(seq 100); do
  status=$(get)
  if [ "$status" = 200 ] && ! cmp -s "$WORK/body" "$WORK/envelope-1"; then changed=1; break; fi
  sleep 0.1
done
[ -n "$changed" ] || { tail -20 "$WORK/serve.log" >&2; fail "the served envelope did not change within 10 s (last status $status)"; }
cp "$WORK/body" "$WORK/envelope-2"
[ "$(header etag)" != "$etag" ] || fail "envelope-2 has envelope-1's ETag"
echo "   a new envelope after $(( ($(date +%s%N) - started) / 1000000 )) ms, ETag $(header etag)"

NOW=$(( $(date +%s%N) / 1000000 ))
status=0

echo "== JavaScript: runtimes/js/server-update.mjs"
node runtimes/js/server-update.mjs "$WORK/envelope-1" "$WORK/envelope-2" "$KEYS/a.pub.pem" "$KEYS/b.pub.pem" "$NOW" || status=1

echo "== Java: runtimes/java/server-update/ServerUpdate.java (--release 11, against the runtime compiled here)"
J=$WORK/java
mkdir -p "$J/compile-only" "$J/classes" "$J/driver"
javac --release 11 -encoding UTF-8 -d "$J/compile-only" $(find runtimes/java/compile-only -name '*.java')
javac --release 11 -encoding UTF-8 -cp "$J/compile-only" -d "$J/classes" $(find runtimes/java/src -name '*.java')
jar --create --file "$J/sessionpolicy.jar" -C "$J/classes" .
javac --release 11 -Xlint:all -Werror -encoding UTF-8 -cp "$J/sessionpolicy.jar:$J/compile-only" -d "$J/driver" runtimes/java/server-update/ServerUpdate.java
java -cp "$J/driver:$J/sessionpolicy.jar" ServerUpdate "$WORK/envelope-1" "$WORK/envelope-2" "$KEYS/a.pub.pem" "$KEYS/b.pub.pem" "$NOW" || status=1

if [ "$status" -ne 0 ]; then fail "a runtime did not update from the server (above)"; fi
echo "server-update: Java and JavaScript updated from the running server (each: envelope-1 installed, then unchanged;"
echo "  bad-signature, signature-missing, envelope-malformed refused with the machine kept; unpinned-key for key b;"
echo "  envelope-2 installed with a larger serial and another digest; envelope-1 then refused: rollback; a launch decided)"
