#!/usr/bin/env bash
# What tracing costs: the echo yardstick, then `policyctl serve` without tracing (the default)
# and with every request traced to the test OTLP collector (Server/Tests/Collector, which decodes
# each export with opentelemetry-proto: pip install opentelemetry-proto), stateless and stateful
# (SQLite), in the same rounds; each row's median round and its share of echo.
#
#   bash load/tracing.sh            # Env: DURATION (s, 5), ROUNDS (3), THREADS (2), CONNECTIONS (32), BIN
#   TRACED=0 bash load/tracing.sh   # without the traced server and the collector: tracing off
#                                   # against echo alone (the collector's decoding takes CPU too)
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-3}
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-32}
TRACED=${TRACED:-1}
SECRET=load-secret-0123456789abcdef0123456789
. load/lib.sh
release_bin
PY=${SESSIONPOLICY_TEST_PYTHON:-python3}
python3 load/tokens.py "$SECRET" 1000 > "$WORK/tokens.txt"
cp load/evaluate.json "$WORK/evaluate.json"  # the stateless row's body: a launch with a stored state
mkfifo "$WORK/collector.in"
"$PY" Server/Tests/Collector/otlp_receiver.py --port 0 --out "$WORK/spans.jsonl" <"$WORK/collector.in" >"$WORK/collector.out" 2>&1 &
PIDS+=($!)
exec 9>"$WORK/collector.in"
for _ in $(seq 100); do grep -q listening "$WORK/collector.out" 2>/dev/null && break; sleep 0.1; done
COLLECTOR=$(sed -n 's/^listening on //p' "$WORK/collector.out")
[ -n "$COLLECTOR" ] || { cat "$WORK/collector.out" >&2; exit 1; }
"$BIN/echo-server" 18190 >/dev/null 2>&1 &
PIDS+=($!)
serve() { # PORT [ARGS...]
  local port=$1; shift
  SESSIONPOLICY_HS256_SECRET=$SECRET SESSIONPOLICY_LOG_LEVEL=error "$BIN/policyctl-serve" --port "$port" --policies policies \
    --storage "sqlite:$WORK/load-$port.sqlite" "$@" >"$WORK/serve-$port.log" 2>&1 &
  PIDS+=($!)
  wait_port "$port" healthz "$WORK/serve-$port.log"
}
serve 18191
[ "$TRACED" = 1 ] && serve 18192 --tracing-otlp-endpoint "$COLLECTOR" --tracing-export-delay 1s
for port in 18191 $([ "$TRACED" = 1 ] && echo 18192); do
  TOKENS=$WORK/tokens.txt wrk -t"$THREADS" -c"$CONNECTIONS" -d2s -s load/stateful.lua "http://127.0.0.1:$port" >/dev/null
done
echo "wrk -t$THREADS -c$CONNECTIONS -d${DURATION}s on loopback, release builds, $(nproc) cores, median of $ROUNDS rounds"
for round in $(seq "$ROUNDS"); do
  echo "round $round/$ROUNDS" >&2
  BODY=$WORK/evaluate.json measure echo http://127.0.0.1:18190/echo -s load/post.lua
  BODY=$WORK/evaluate.json measure stateless-off http://127.0.0.1:18191/v1/policies/spendiq/evaluate -s load/post.lua
  [ "$TRACED" = 1 ] && BODY=$WORK/evaluate.json measure stateless-on http://127.0.0.1:18192/v1/policies/spendiq/evaluate -s load/post.lua
  TOKENS=$WORK/tokens.txt measure stateful-off http://127.0.0.1:18191 -s load/stateful.lua
  [ "$TRACED" = 1 ] && TOKENS=$WORK/tokens.txt measure stateful-on http://127.0.0.1:18192 -s load/stateful.lua
done
sleep 2
echo
python3 - "$WORK" <<'PY'
import json, os, sys
w = sys.argv[1]
sys.path.insert(0, "load")
from medians import median as _median
def median(name): return _median(w, name)
(echo, _) = median("echo")
print(f"| {'what':38} | {'requests/s':>10} | {'p99':>8} | {'failed':>6} | {'of echo':>7} |")
print(f"|{'-' * 40}|{'-' * 12}|{'-' * 10}|{'-' * 8}|{'-' * 9}|")
for name, label in [("echo", "echo"), ("stateless-off", "stateless, tracing off"), ("stateless-on", "stateless, traced"),
                    ("stateful-off", "stateful SQLite, tracing off"), ("stateful-on", "stateful SQLite, traced")]:
    if not os.path.exists(os.path.join(w, "runs-" + name)): continue
    (row, failed) = median(name)
    print(f"| {label:38} | {float(row[0]):>10,.0f} | {row[2]:>8} | {failed:>6} | {float(row[0]) / float(echo[0]):>6.0%} |")
spans = sum(1 for _ in open(os.path.join(w, "spans.jsonl"))) if os.path.exists(os.path.join(w, "spans.jsonl")) else 0
print(f"\nspans the collector received and decoded: {spans:,}")
PY
