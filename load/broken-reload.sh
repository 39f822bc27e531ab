#!/usr/bin/env bash
# Fault: push a broken policy during a stateless load, send SIGHUP, then restore it; count the
# requests that failed. The server must keep serving the last good version: 0 failures.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-15}
WORK=$(mktemp -d)
PORT=18094
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT

swift build -c release --package-path Server --product policyctl-serve >/dev/null
BIN=$(swift build -c release --package-path Server --show-bin-path)
cp -r policies "$WORK/policies"
echo '{"event":{"type":"launch","time":"2026-03-01T09:00:00Z","network":"online"}}' > "$WORK/evaluate.json"
SESSIONPOLICY_LOG_LEVEL=error "$BIN/policyctl-serve" --port $PORT --policies "$WORK/policies" \
  --storage "sqlite:$WORK/s.sqlite" --reload-interval 0.5 >"$WORK/serve.log" 2>&1 &
PID=$!
for _ in $(seq 100); do curl -s "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done

(
  sleep $((DURATION / 4))
  cp "$WORK/policies/spendiq.yaml" "$WORK/spendiq.good"
  printf 'version: 1\nname: spendiq\nsession: { max: [broken\n' > "$WORK/policies/spendiq.yaml"
  kill -HUP $PID
  sleep $((DURATION / 4))
  echo "  during the break: /healthz says $(curl -s http://127.0.0.1:$PORT/healthz | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["status"], "-", len(d["problems"]), "broken file(s), still serving", d["problems"][0]["still_serving"] if d["problems"] else "-")')"
  cp "$WORK/spendiq.good" "$WORK/policies/spendiq.yaml"
  kill -HUP $PID
) &
FAULT=$!
OUT=$(BODY=$WORK/evaluate.json wrk -t2 -c16 -d"${DURATION}s" -s load/post.lua "http://127.0.0.1:$PORT/v1/policies/spendiq/evaluate")
wait "$FAULT"
REQUESTS=$(echo "$OUT" | awk '/requests in/ {print $1}')
NON2XX=$(echo "$OUT" | awk '/Non-2xx/ {print $5}')
ERRORS=$(echo "$OUT" | awk '/Socket errors/ {print $4+$6+$8+$10}')
FAILED=$(( ${NON2XX:-0} + ${ERRORS:-0} ))
echo "broken policy pushed and restored during ${DURATION} s of load: $REQUESTS requests, $FAILED failed (target 0)"
echo "  reloads: $(curl -s http://127.0.0.1:$PORT/metrics | grep '^sessionpolicy_policy_reloads_total' | tr '\n' ' ')"
[ "$FAILED" = 0 ]
