#!/usr/bin/env bash
# Realistic load (issue 12): load/workload.lua's traffic (USERS users with a device each, on every
# shipped policy: IdP logins and refreshes with a service token, launches online and offline,
# biometric prompts with failures, backgrounding, signals, logouts, clock set back, each
# session's time crossing the policies' boundaries), measured with wrk beside the echo server in
# the same run, and pgbench running the PostgreSQL statements a stateful event costs: with the
# decision log (the default), the session's UPDATE and the decision's INSERT; without it (a third
# server, `--decision-log-retention 0`, its own users), the UPDATE alone.
#
#   PG_URL=postgres://postgres@127.0.0.1:54329/policytest bash load/realistic.sh
#
# Env: USERS (100000), DURATION (s per run, 10), ROUNDS (3), THREADS (2), CONNECTIONS (32),
# WARMUP (s of stateful traffic per server before measuring, 3; a server's first event of a
# session reads the row before writing it, so give it USERS / rate seconds to see them all),
# BATCH (items per batch request, 100), BIN (a folder with release policyctl-serve and
# echo-server; default: build them), TARGETS (the rows to measure beside echo, default
# "stateless batch sqlite rs256 postgres"; "postgres" alone measures the PostgreSQL rows and pgbench;
# "rs256" runs a second SQLite server whose users' and back end's tokens are RS256 tokens of the
# test OpenID Connect provider, keys by discovery; it needs a Python with joserfc,
# SESSIONPOLICY_TEST_PYTHON, and is left out without one).
# Without PG_URL the PostgreSQL rows are left out.
# Needs wrk, python3 and, for PostgreSQL, psql and pgbench. Not a test: it prints figures.
set -euo pipefail
cd "$(dirname "$0")/.."
USERS=${USERS:-100000}
DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-32}
BATCH=${BATCH:-100}
SECRET=load-secret-0123456789abcdef0123456789
SERVICE_SECRET=load-service-secret-0123456789abcdef0123
. load/lib.sh
SCRIPT_START=$(date +%s)
TARGETS=${TARGETS:-stateless batch sqlite rs256 postgres}
export THREADS BATCH SCRIPT_START
wants() { [[ " $TARGETS " == *" $1 "* ]]; }

release_bin

python3 load/tokens.py "$SECRET" "$USERS" > "$WORK/tokens.txt"
# Two halves for two servers: a load balancer that keeps each user on one server.
awk 'NR % 2 == 1' "$WORK/tokens.txt" > "$WORK/tokens-a.txt"
awk 'NR % 2 == 0' "$WORK/tokens.txt" > "$WORK/tokens-b.txt"
# Other users for the server without a decision log, so that no two servers share a session.
PREFIX=nolog- python3 load/tokens.py "$SECRET" "$USERS" > "$WORK/tokens-nolog.txt"
SERVICE_TOKEN=$(python3 load/tokens.py "$SERVICE_SECRET" 1 | awk '{print $2}')
export SERVICE_TOKEN
cp load/evaluate.json "$WORK/evaluate.json"  # the stateless row's body: a launch with a stored state

serve() { # PORT STORAGE [OPTIONS...]
  SESSIONPOLICY_HS256_SECRET=$SECRET SESSIONPOLICY_SERVICE_HS256_SECRET=$SERVICE_SECRET SESSIONPOLICY_LOG_LEVEL=error \
    "$BIN/policyctl-serve" --port "$1" --policies policies --storage "$2" --clock-max-delay 400d "${@:3}" >"$WORK/serve-$1.log" 2>&1 &
  PIDS+=($!)
  wait_port "$1" healthz
}

"$BIN/echo-server" 18190 >/dev/null 2>&1 &
PIDS+=($!)
sleep 1
serve 18191 "sqlite:$WORK/load.sqlite"
# RS256: the same users and workload, tokens from the test provider (the back end's by its
# client id, `--service-client`), keys by discovery alone.
PY=${SESSIONPOLICY_TEST_PYTHON:-python3}
if wants rs256 && ! "$PY" -c "import joserfc" 2>/dev/null; then
  echo "no joserfc in $PY: the RS256 row is left out" >&2
  TARGETS=${TARGETS/rs256/}
fi
if wants rs256; then
  "$PY" Server/Tests/Provider/oidc_provider.py --port 0 --ignore-stdin >"$WORK/provider.out" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 100); do grep -q listening "$WORK/provider.out" 2>/dev/null && break; sleep 0.1; done
  ISSUER=$(sed -n 's/^listening on //p' "$WORK/provider.out")
  python3 load/provider_tokens.py "$ISSUER" "$USERS" RS256 > "$WORK/rs256-tokens.txt"
  RS256_SERVICE_TOKEN=$(curl -s -X POST "$ISSUER/control/mint" -H 'Content-Type: application/json' \
    -d '{"alg": "RS256", "sub": "service-account-load-backend", "aud": "sessionpolicy", "azp": "load-backend", "exp_in": 86400}' \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["token"])')
  SESSIONPOLICY_LOG_LEVEL=error "$BIN/policyctl-serve" --port 18195 --policies policies --storage "sqlite:$WORK/load-rs256.sqlite" \
    --clock-max-delay 400d --token-issuer "$ISSUER" --token-audience sessionpolicy --service-client load-backend \
    >"$WORK/serve-18195.log" 2>&1 &
  PIDS+=($!)
  wait_port 18195 healthz
fi
wants postgres || PG_URL=
if [ -n "${PG_URL:-}" ]; then
  reset_pg "$PG_URL"
  serve 18192 "$PG_URL"
  serve 18193 "$PG_URL"
  serve 18194 "$PG_URL" --decision-log-retention 0
  # pgbench runs the statements a stateful event costs here, on tables of USERS rows like the
  # server's: a conditional UPDATE ... RETURNING of one session row (about 400 bytes of state),
  # and with the decision log also the INSERT of its decision (one statement, as the server's).
  psql "$PG_URL" -q <<SQL >/dev/null
CREATE TABLE bench_sessions (policy TEXT NOT NULL, user_id TEXT NOT NULL, device_id TEXT NOT NULL, state TEXT,
  revision BIGINT NOT NULL, updated_at BIGINT NOT NULL, last_decision BIGINT, PRIMARY KEY (policy, user_id, device_id));
INSERT INTO bench_sessions SELECT 'spendiq', 'load-' || i, 'phone', repeat('x', 400), 1, 0 FROM generate_series(0, $USERS - 1) i;
CREATE TABLE bench_decisions (
  id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, policy TEXT NOT NULL, digest TEXT NOT NULL,
  user_id TEXT NOT NULL, device_id TEXT NOT NULL, revision BIGINT NOT NULL,
  event_time BIGINT NOT NULL, server_time BIGINT NOT NULL, event TEXT NOT NULL, network TEXT,
  decision TEXT, reason TEXT NOT NULL, notices TEXT NOT NULL, transition INTEGER NOT NULL,
  state TEXT NOT NULL, previous BIGINT);
CREATE INDEX bench_decisions_by_time ON bench_decisions (server_time);
SQL
  cat > "$WORK/pgbench.sql" <<'SQL'
\set u random(0, :users - 1)
UPDATE bench_sessions SET state = state, revision = revision + 1, updated_at = :u
  WHERE policy = 'spendiq' AND user_id = 'load-' || :u AND device_id = 'phone' AND revision >= 1 AND state IS NOT NULL
  RETURNING 1;
SQL
  cat > "$WORK/pgbench-log.sql" <<'SQL'
\set u random(0, :users - 1)
WITH d AS (SELECT nextval(pg_get_serial_sequence('bench_decisions', 'id')) AS id),
u AS (UPDATE bench_sessions s SET state = state, revision = revision + 1, updated_at = :u, last_decision = d.id FROM d
  WHERE policy = 'spendiq' AND user_id = 'load-' || :u AND device_id = 'phone' AND revision >= 1 AND state IS NOT NULL
  RETURNING d.id, s.policy, s.user_id, s.device_id, s.revision)
INSERT INTO bench_decisions (id, policy, digest, user_id, device_id, revision, event_time, server_time, event, network,
  decision, reason, notices, transition, state, previous)
SELECT id, policy, 'sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', user_id, device_id,
  revision, :u, :u, 'launch', 'online', 'allow', 'within_limits', '', 7, 'active', id - 1 FROM u RETURNING 1;
SQL
fi

# Warm-up, not counted.
WARMUP=${WARMUP:-3}
if wants sqlite; then
  FIRST=1 TOKENS=$WORK/tokens.txt MODE=stateful wrk -t"$THREADS" -c"$CONNECTIONS" -d"${WARMUP}s" -s load/workload.lua http://127.0.0.1:18191 >/dev/null 2>&1
fi
if wants rs256; then
  FIRST=1 TOKENS=$WORK/rs256-tokens.txt SERVICE_TOKEN=$RS256_SERVICE_TOKEN MODE=stateful wrk -t"$THREADS" -c"$CONNECTIONS" \
    -d"${WARMUP}s" -s load/workload.lua http://127.0.0.1:18195 >/dev/null 2>&1
fi
if [ -n "${PG_URL:-}" ]; then
  FIRST=1 TOKENS=$WORK/tokens.txt MODE=stateful wrk -t"$THREADS" -c"$CONNECTIONS" -d"${WARMUP}s" -s load/workload.lua http://127.0.0.1:18192 >/dev/null 2>&1
  TOKENS=$WORK/tokens-a.txt MODE=stateful wrk -t"$THREADS" -c"$CONNECTIONS" -d"${WARMUP}s" -s load/workload.lua http://127.0.0.1:18192 >/dev/null 2>&1 &
  warm=$!
  TOKENS=$WORK/tokens-b.txt MODE=stateful wrk -t"$THREADS" -c"$CONNECTIONS" -d"${WARMUP}s" -s load/workload.lua http://127.0.0.1:18193 >/dev/null 2>&1
  wait "$warm"
  FIRST=1 TOKENS=$WORK/tokens-nolog.txt MODE=stateful wrk -t"$THREADS" -c"$CONNECTIONS" -d"${WARMUP}s" -s load/workload.lua http://127.0.0.1:18194 >/dev/null 2>&1
fi
BODY=$WORK/evaluate.json wrk -t"$THREADS" -c"$CONNECTIONS" -d3s -s load/post.lua http://127.0.0.1:18190/echo >/dev/null

echo "wrk -t$THREADS -c$CONNECTIONS -d${DURATION}s on loopback, release builds, $(nproc) cores, $USERS users, median of $ROUNDS rounds"
for round in $(seq "$ROUNDS"); do
  echo "round $round/$ROUNDS" >&2
  BODY=$WORK/evaluate.json measure echo http://127.0.0.1:18190/echo -s load/post.lua
  if wants stateless; then TOKENS=$WORK/tokens.txt MODE=stateless measure stateless http://127.0.0.1:18191 -s load/workload.lua; fi
  if wants batch; then TOKENS=$WORK/tokens.txt MODE=batch measure batch http://127.0.0.1:18191 -s load/workload.lua; fi
  if wants sqlite; then TOKENS=$WORK/tokens.txt MODE=stateful measure stateful-sqlite http://127.0.0.1:18191 -s load/workload.lua; fi
  if wants rs256; then
    TOKENS=$WORK/rs256-tokens.txt SERVICE_TOKEN=$RS256_SERVICE_TOKEN MODE=stateful \
      measure stateful-sqlite-rs256 http://127.0.0.1:18195 -s load/workload.lua
  fi
  if [ -n "${PG_URL:-}" ]; then
    TOKENS=$WORK/tokens.txt MODE=stateful measure stateful-postgres http://127.0.0.1:18192 -s load/workload.lua
    # Two servers on one database, each with half the users, at once.
    a=$(TOKENS=$WORK/tokens-a.txt MODE=stateful wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency -s load/workload.lua http://127.0.0.1:18192 2>>"$WORK/wrk-errors.log" &
        TOKENS=$WORK/tokens-b.txt MODE=stateful wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency -s load/workload.lua http://127.0.0.1:18193 2>>"$WORK/wrk-errors.log" > "$WORK/wrk-b.out"; wait)
    la=$(wrk_line "$a"); lb=$(wrk_line "$(cat "$WORK/wrk-b.out")")
    echo "$la $lb" | awk '{printf "%.2f %s %s %d\n", $1 + $5, $2, $3, $4 + $8}' >> "$WORK/runs-two-servers"
    echo "  two-servers: $la | $lb" >&2
    TOKENS=$WORK/tokens-nolog.txt MODE=stateful measure stateful-postgres-nolog http://127.0.0.1:18194 -s load/workload.lua
    for script in pgbench-log pgbench; do
      tps=$(pgbench -n -c "$CONNECTIONS" -j "$THREADS" -T "$DURATION" -D users="$USERS" -f "$WORK/$script.sql" "$PG_URL" 2>/dev/null \
        | awk '/^tps/ {print $3}')
      echo "$tps - - 0" >> "$WORK/runs-$script"
      echo "  $script: $tps tps" >&2
    done
  fi
done
echo
python3 - "$WORK" "$BATCH" <<'PY'
import os, sys
w, batch = sys.argv[1], int(sys.argv[2])
sys.path.insert(0, "load")
from medians import median as _median
def runs(name): return _median(w, name)
names = [("echo", "echo (yardstick)", 1), ("stateless", "stateless evaluate", 1), ("batch", f"batch ({batch} items/request)", batch),
         ("stateful-sqlite", "stateful, SQLite", 1), ("stateful-sqlite-rs256", "stateful, SQLite, RS256 tokens", 1),
         ("stateful-postgres", "stateful, PostgreSQL", 1),
         ("two-servers", "stateful, 2 servers, 1 PostgreSQL", 1), ("pgbench-log", "pgbench, UPDATE + decision INSERT", 1),
         ("stateful-postgres-nolog", "stateful, PostgreSQL, no decision log", 1), ("pgbench", "pgbench, the UPDATE alone", 1)]
print(f"| {'what':36} | {'requests/s':>11} | {'decisions/s':>11} | {'p50':>8} | {'p99':>8} | {'failed':>6} |")
print(f"|{'-' * 38}|{'-' * 13}|{'-' * 13}|{'-' * 10}|{'-' * 10}|{'-' * 8}|")
rps = {}
for key, label, per in names:
    r = runs(key)
    if r is None: continue
    (median, p50, p99, _), failed = r[0], r[1]
    rps[key] = float(median)
    print(f"| {label:36} | {float(median):11,.0f} | {float(median) * per:11,.0f} | {p50:>8} | {p99:>8} | {failed:6} |")
print()
echo = rps["echo"]
for key in ["stateless", "stateful-sqlite", "stateful-postgres", "two-servers"]:
    if key in rps: print(f"{key} / echo: {rps[key] / echo:.0%}")
if "stateful-sqlite-rs256" in rps:
    print(f"stateful RS256 / HS256: {rps['stateful-sqlite-rs256'] / rps['stateful-sqlite']:.0%} (target >= 90%)")
if "pgbench" in rps:
    print(f"stateful PostgreSQL / pgbench of the same statements: {rps['stateful-postgres'] / rps['pgbench-log']:.0%} (target >= 80%)")
    print(f"2 servers / pgbench of the same statements: {rps['two-servers'] / rps['pgbench-log']:.0%}")
    print(f"no decision log / pgbench of the UPDATE: {rps['stateful-postgres-nolog'] / rps['pgbench']:.0%} (target >= 80%)")
PY
echo "refused or failed answers (first few per status and thread):" >&2
sort "$WORK/wrk-errors.log" 2>/dev/null | uniq -c | sort -rn | head -10 >&2 || true
