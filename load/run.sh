#!/usr/bin/env bash
# Load figures for `policyctl serve`, with wrk on loopback, next to a trivial Hummingbird JSON
# echo handler measured in the same run as the yardstick. Release builds.
#
#   bash load/run.sh                      # SQLite only
#   PG_URL=postgres://postgres@127.0.0.1:54329/policytest bash load/run.sh   # and PostgreSQL
#
# Env: DURATION (s per run, default 10), ROUNDS (3), WARMUP (s, 3), THREADS (2), CONNECTIONS (32), BATCH (items per batch, 1000).
# Needs wrk (apt-get install -y wrk) and python3. Not a test: it prints figures. With a Python
# that has joserfc (SESSIONPOLICY_TEST_PYTHON, as .ci/run makes it), it also runs a server that
# takes RS256 tokens from the test OpenID Connect provider (discovery, JWKS) beside the HS256 one.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
WARMUP=${WARMUP:-3}
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-32}
BATCH=${BATCH:-1000}
SECRET=load-secret-0123456789abcdef0123456789
. load/lib.sh

release_bin

python3 load/tokens.py "$SECRET" 1000 > "$WORK/tokens.txt"
python3 load/batch.py "$BATCH" > "$WORK/batch.json"
cp load/evaluate.json "$WORK/evaluate.json"  # the stateless row's body: a launch with a stored state

serve() { # PORT STORAGE
  SESSIONPOLICY_HS256_SECRET=$SECRET SESSIONPOLICY_LOG_LEVEL=error \
    "$BIN/policyctl-serve" --port "$1" --policies policies --storage "$2" >"$WORK/serve-$1.log" 2>&1 &
  PIDS+=($!)
  wait_port "$1" healthz
}

"$BIN/echo-server" 18090 >/dev/null 2>&1 &
PIDS+=($!)
sleep 1
serve 18091 "sqlite:$WORK/load.sqlite"
[ -n "${PG_URL:-}" ] && serve 18092 "$PG_URL"

# RS256: the test provider's tokens, keys by discovery; the same store kind as the HS256 row.
PY=${SESSIONPOLICY_TEST_PYTHON:-python3}
RS256=""
if "$PY" -c "import joserfc" 2>/dev/null; then
  "$PY" Server/Tests/Provider/oidc_provider.py --port 0 --ignore-stdin >"$WORK/provider.out" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 100); do grep -q listening "$WORK/provider.out" 2>/dev/null && break; sleep 0.1; done
  ISSUER=$(sed -n 's/^listening on //p' "$WORK/provider.out")
  python3 load/provider_tokens.py "$ISSUER" 1000 RS256 > "$WORK/rs256-tokens.txt"
  SESSIONPOLICY_LOG_LEVEL=error "$BIN/policyctl-serve" --port 18093 --policies policies \
    --storage "sqlite:$WORK/load-rs256.sqlite" --token-issuer "$ISSUER" --token-audience sessionpolicy \
    >"$WORK/serve-18093.log" 2>&1 &
  PIDS+=($!)
  wait_port 18093 healthz
  RS256=1
else
  echo "no joserfc in $PY: the RS256 row is left out (pip install joserfc, or set SESSIONPOLICY_TEST_PYTHON)" >&2
fi

# Warm-up, not counted: first events create the sessions' rows and fill the token cache.
for port in 18091 ${PG_URL:+18092}; do
  TOKENS=$WORK/tokens.txt wrk -t"$THREADS" -c"$CONNECTIONS" -d"${WARMUP}s" -s load/stateful.lua "http://127.0.0.1:$port" >/dev/null
done
if [ -n "$RS256" ]; then
  TOKENS=$WORK/rs256-tokens.txt wrk -t"$THREADS" -c"$CONNECTIONS" -d"${WARMUP}s" -s load/stateful.lua http://127.0.0.1:18093 >/dev/null
fi
BODY=$WORK/evaluate.json wrk -t"$THREADS" -c"$CONNECTIONS" -d"${WARMUP}s" -s load/post.lua http://127.0.0.1:18090/echo >/dev/null

# Every round measures the echo yardstick and then each target, so slow and fast moments of
# the machine hit both sides; the table shows each row's median round.
echo "wrk -t$THREADS -c$CONNECTIONS -d${DURATION}s on loopback, release builds, $(nproc) cores, median of $ROUNDS rounds"
for round in $(seq "$ROUNDS"); do
  echo "round $round/$ROUNDS" >&2
  BODY=$WORK/evaluate.json measure echo http://127.0.0.1:18090/echo -s load/post.lua
  BODY=$WORK/evaluate.json measure stateless http://127.0.0.1:18091/v1/policies/spendiq/evaluate -s load/post.lua
  BODY=$WORK/batch.json measure batch http://127.0.0.1:18091/v1/policies/spendiq/evaluate/batch -s load/post.lua
  TOKENS=$WORK/tokens.txt measure stateful-sqlite http://127.0.0.1:18091 -s load/stateful.lua
  if [ -n "$RS256" ]; then
    TOKENS=$WORK/rs256-tokens.txt measure stateful-sqlite-rs256 http://127.0.0.1:18093 -s load/stateful.lua
  fi
  if [ -n "${PG_URL:-}" ]; then
    TOKENS=$WORK/tokens.txt measure stateful-postgres http://127.0.0.1:18092 -s load/stateful.lua
  fi
done
echo
python3 - "$WORK" "$BATCH" <<'PY'
import os, statistics, sys
w, batch = sys.argv[1], int(sys.argv[2])
sys.path.insert(0, "load")
from medians import median as _median
def runs(name): return _median(w, name)
names = [("echo", "echo"), ("stateless", "stateless evaluate"), ("batch", f"batch ({batch} items/request)"),
         ("stateful-sqlite", "stateful, SQLite (HS256 tokens)"),
         ("stateful-sqlite-rs256", "stateful, SQLite (RS256, JWKS)"), ("stateful-postgres", "stateful, PostgreSQL")]
print(f"| {'what':34} | {'requests/s':>12} | {'p50':>8} | {'p99':>8} | {'failed':>6} |")
print(f"|{'-' * 36}|{'-' * 14}|{'-' * 10}|{'-' * 10}|{'-' * 8}|")
rps = {}
for key, label in names:
    r = runs(key)
    if r is None: continue
    (median, p50, p99, _), failed = r[0], r[1]
    rps[key] = float(median)
    print(f"| {label:34} | {float(median):12,.0f} | {p50:>8} | {p99:>8} | {failed:6} |")
print()
echo = rps["echo"]
print(f"stateless / echo: {rps['stateless'] / echo:.0%} (target >= 80%)")
print(f"batch decisions/s: {rps['batch'] * batch:,.0f} (target >= 1,000,000)")
print(f"stateful SQLite / echo: {rps['stateful-sqlite'] / echo:.0%} (target >= 60%)")
if "stateful-sqlite-rs256" in rps:
    print(f"stateful RS256 / HS256: {rps['stateful-sqlite-rs256'] / rps['stateful-sqlite']:.0%} (target >= 90%)")
if "stateful-postgres" in rps:
    print(f"stateful PostgreSQL / echo: {rps['stateful-postgres'] / echo:.0%}")
PY

# A key rotation under load: the provider rotates its RSA key; 1,000 users' tokens of the new
# key (which the server has not fetched yet) are interleaved with the 1,000 of the old one. The
# server fetches the key set again at the first unknown `kid` (at most once per
# token.jwks.refetch.interval) and must answer every request 2xx.
if [ -n "$RS256" ]; then
  curl -s -X POST "$ISSUER/control/rotate" -H 'Content-Type: application/json' -d '{"type": "RSA"}' >/dev/null
  PREFIX=rotated- python3 load/provider_tokens.py "$ISSUER" 1000 RS256 > "$WORK/rotated-tokens.txt"
  paste -d'\n' "$WORK/rs256-tokens.txt" "$WORK/rotated-tokens.txt" > "$WORK/mixed-tokens.txt"
  line=$(wrk_line "$(TOKENS=$WORK/mixed-tokens.txt wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency \
    -s load/stateful.lua http://127.0.0.1:18093 2>>"$WORK/wrk-errors.log")")
  read -r rps p50 p99 failed <<<"$line"
  echo
  echo "rotation under load (RS256, a key the server had not fetched, interleaved): $rps requests/s, p99 $p99, $failed failed (target 0)"
fi
