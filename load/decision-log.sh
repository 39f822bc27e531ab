#!/usr/bin/env bash
# The decision log's cost: stateful events with the log on (the default) and off
# (`--decision-log-retention 0`), side by side in the same run, on SQLite and, with PG_URL, on
# PostgreSQL (two databases made next to PG_URL's, one per server, so neither server's rows are
# the other's). Release builds, wrk on loopback; rounds alternate on and off; each row's median.
#
#   bash load/decision-log.sh
#   PG_URL=postgres://postgres@127.0.0.1:54329/policytest bash load/decision-log.sh
#
# Env: DURATION (s per run, 10), ROUNDS (3), WARMUP (s, 3), THREADS (2), CONNECTIONS (32).
# Needs wrk, python3 (and psql with PG_URL). Not a test: it prints figures. Target: on >= 85% of off.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
WARMUP=${WARMUP:-3}
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-32}
SECRET=load-secret-0123456789abcdef0123456789
. load/lib.sh

release_bin
python3 load/tokens.py "$SECRET" 1000 > "$WORK/tokens.txt"

serve() { # PORT STORAGE RETENTION
  SESSIONPOLICY_HS256_SECRET=$SECRET SESSIONPOLICY_LOG_LEVEL=error \
    "$BIN/policyctl-serve" --port "$1" --policies policies --storage "$2" --decision-log-retention "$3" \
    >"$WORK/serve-$1.log" 2>&1 &
  PIDS+=($!)
  wait_port "$1" healthz
}

targets=(sqlite-on:18101 sqlite-off:18102)
serve 18101 "sqlite:$WORK/on.sqlite" 90d
serve 18102 "sqlite:$WORK/off.sqlite" 0
if [ -n "${PG_URL:-}" ]; then
  base=${PG_URL%/*}
  for db in policyload_on policyload_off; do
    psql "$PG_URL" -q -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null
  done
  serve 18103 "$base/policyload_on" 90d
  serve 18104 "$base/policyload_off" 0
  targets+=(postgres-on:18103 postgres-off:18104)
fi

for t in "${targets[@]}"; do
  TOKENS=$WORK/tokens.txt wrk -t"$THREADS" -c"$CONNECTIONS" -d"${WARMUP}s" -s load/stateful.lua "http://127.0.0.1:${t#*:}" >/dev/null
done
echo "wrk -t$THREADS -c$CONNECTIONS -d${DURATION}s on loopback, release builds, $(nproc) cores, median of $ROUNDS rounds"
for round in $(seq "$ROUNDS"); do
  echo "round $round/$ROUNDS" >&2
  for t in "${targets[@]}"; do
    TOKENS=$WORK/tokens.txt measure "${t%%:*}" "http://127.0.0.1:${t#*:}" -s load/stateful.lua
  done
done
echo
python3 - "$WORK" <<'PY'
import os, sys
w = sys.argv[1]
sys.path.insert(0, "load")
from medians import median as _median
def median(name): return _median(w, name)
print(f"| {'what':34} | {'requests/s':>12} | {'p50':>8} | {'p99':>8} | {'failed':>6} |")
print(f"|{'-' * 36}|{'-' * 14}|{'-' * 10}|{'-' * 10}|{'-' * 8}|")
for store in ("sqlite", "postgres"):
    got = {}
    for mode in ("off", "on"):
        m = median(f"{store}-{mode}")
        if m is None: continue
        (rps, p50, p99, _), failed = m
        got[mode] = float(rps)
        label = f"stateful, {'SQLite' if store == 'sqlite' else 'PostgreSQL'}, log {mode}"
        print(f"| {label:34} | {float(rps):12,.0f} | {p50:>8} | {p99:>8} | {failed:6} |")
    if len(got) == 2:
        print(f"| {'  log on / log off':34} | {got['on'] / got['off']:12.0%} | {'':8} | {'':8} | {'':6} |")
print()
print("target: log on >= 85% of log off, on each store")
PY
