#!/usr/bin/env bash
# Realistic load (issue 12): load/workload.lua's traffic (USERS users with a device each, on every
# shipped policy: IdP logins and refreshes with a service token, launches online and offline,
# biometric prompts with failures, backgrounding, signals, logouts, clock set back, each
# session's time crossing the policies' boundaries), measured with wrk beside the echo server in
# the same run, and pgbench running the PostgreSQL statement a stateful event costs.
#
#   PG_URL=postgres://postgres@127.0.0.1:54329/policytest bash load/realistic.sh
#
# Env: USERS (100000), DURATION (s per run, 10), ROUNDS (3), THREADS (2), CONNECTIONS (32),
# WARMUP (s of stateful traffic per server before measuring, 3; a server's first event of a
# session reads the row before writing it, so give it USERS / rate seconds to see them all),
# BATCH (items per batch request, 100), BIN (a folder with release policyctl-serve and
# echo-server; default: build them), TARGETS (the rows to measure beside echo, default
# "stateless batch sqlite postgres"; "postgres" alone measures the PostgreSQL rows and pgbench).
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
TARGETS=${TARGETS:-stateless batch sqlite postgres}
export THREADS BATCH SCRIPT_START
wants() { [[ " $TARGETS " == *" $1 "* ]]; }

release_bin

python3 load/tokens.py "$SECRET" "$USERS" > "$WORK/tokens.txt"
# Two halves for two servers: a load balancer that keeps each user on one server.
awk 'NR % 2 == 1' "$WORK/tokens.txt" > "$WORK/tokens-a.txt"
awk 'NR % 2 == 0' "$WORK/tokens.txt" > "$WORK/tokens-b.txt"
SERVICE_TOKEN=$(python3 load/tokens.py "$SERVICE_SECRET" 1 | awk '{print $2}')
export SERVICE_TOKEN
echo '{"event":{"type":"launch","time":"2026-03-01T09:00:00Z","network":"offline"},"state":{"state":"active","user":"alice","device":"d1","auth_mode":"biometric","last_idp_login":"2026-02-27T09:00:00Z","last_online":"2026-02-28T09:00:00Z","last_activity":"2026-02-28T09:00:00Z","highest_time":"2026-02-28T09:00:00Z"}}' > "$WORK/evaluate.json"

serve() { # PORT STORAGE
  SESSIONPOLICY_HS256_SECRET=$SECRET SESSIONPOLICY_SERVICE_HS256_SECRET=$SERVICE_SECRET SESSIONPOLICY_LOG_LEVEL=error \
    "$BIN/policyctl-serve" --port "$1" --policies policies --storage "$2" --clock-max-delay 400d >"$WORK/serve-$1.log" 2>&1 &
  PIDS+=($!)
  wait_port "$1" healthz
}

"$BIN/echo-server" 18190 >/dev/null 2>&1 &
PIDS+=($!)
sleep 1
serve 18191 "sqlite:$WORK/load.sqlite"
wants postgres || PG_URL=
if [ -n "${PG_URL:-}" ]; then
  psql "$PG_URL" -q -c "DROP TABLE IF EXISTS sessions, device_sessions, tickets, decisions, schema_migrations, bench_sessions" >/dev/null
  serve 18192 "$PG_URL"
  serve 18193 "$PG_URL"
  # pgbench runs the statement a stateful event costs here (a conditional UPDATE ... RETURNING of
  # one session row, about 400 bytes of state) on a table of USERS rows like the server's.
  psql "$PG_URL" -q <<SQL >/dev/null
CREATE TABLE bench_sessions (policy TEXT NOT NULL, user_id TEXT NOT NULL, device_id TEXT NOT NULL, state TEXT,
  revision BIGINT NOT NULL, updated_at BIGINT NOT NULL, PRIMARY KEY (policy, user_id, device_id));
INSERT INTO bench_sessions SELECT 'spendiq', 'load-' || i, 'phone', repeat('x', 400), 1, 0 FROM generate_series(0, $USERS - 1) i;
SQL
  cat > "$WORK/pgbench.sql" <<'SQL'
\set u random(0, :users - 1)
UPDATE bench_sessions SET state = state, revision = revision + 1, updated_at = :u
  WHERE policy = 'spendiq' AND user_id = 'load-' || :u AND device_id = 'phone' AND revision >= 1 AND state IS NOT NULL
  RETURNING 1;
SQL
fi

# Warm-up, not counted.
WARMUP=${WARMUP:-3}
if wants sqlite; then
  FIRST=1 TOKENS=$WORK/tokens.txt MODE=stateful wrk -t"$THREADS" -c"$CONNECTIONS" -d"${WARMUP}s" -s load/workload.lua http://127.0.0.1:18191 >/dev/null 2>&1
fi
if [ -n "${PG_URL:-}" ]; then
  FIRST=1 TOKENS=$WORK/tokens.txt MODE=stateful wrk -t"$THREADS" -c"$CONNECTIONS" -d"${WARMUP}s" -s load/workload.lua http://127.0.0.1:18192 >/dev/null 2>&1
  TOKENS=$WORK/tokens-a.txt MODE=stateful wrk -t"$THREADS" -c"$CONNECTIONS" -d"${WARMUP}s" -s load/workload.lua http://127.0.0.1:18192 >/dev/null 2>&1 &
  warm=$!
  TOKENS=$WORK/tokens-b.txt MODE=stateful wrk -t"$THREADS" -c"$CONNECTIONS" -d"${WARMUP}s" -s load/workload.lua http://127.0.0.1:18193 >/dev/null 2>&1
  wait "$warm"
fi
BODY=$WORK/evaluate.json wrk -t"$THREADS" -c"$CONNECTIONS" -d3s -s load/post.lua http://127.0.0.1:18190/echo >/dev/null

echo "wrk -t$THREADS -c$CONNECTIONS -d${DURATION}s on loopback, release builds, $(nproc) cores, $USERS users, median of $ROUNDS rounds"
for round in $(seq "$ROUNDS"); do
  echo "round $round/$ROUNDS" >&2
  BODY=$WORK/evaluate.json measure echo http://127.0.0.1:18190/echo -s load/post.lua
  if wants stateless; then TOKENS=$WORK/tokens.txt MODE=stateless measure stateless http://127.0.0.1:18191 -s load/workload.lua; fi
  if wants batch; then TOKENS=$WORK/tokens.txt MODE=batch measure batch http://127.0.0.1:18191 -s load/workload.lua; fi
  if wants sqlite; then TOKENS=$WORK/tokens.txt MODE=stateful measure stateful-sqlite http://127.0.0.1:18191 -s load/workload.lua; fi
  if [ -n "${PG_URL:-}" ]; then
    TOKENS=$WORK/tokens.txt MODE=stateful measure stateful-postgres http://127.0.0.1:18192 -s load/workload.lua
    # Two servers on one database, each with half the users, at once.
    a=$(TOKENS=$WORK/tokens-a.txt MODE=stateful wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency -s load/workload.lua http://127.0.0.1:18192 2>>"$WORK/wrk-errors.log" &
        TOKENS=$WORK/tokens-b.txt MODE=stateful wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency -s load/workload.lua http://127.0.0.1:18193 2>>"$WORK/wrk-errors.log" > "$WORK/wrk-b.out"; wait)
    la=$(wrk_line "$a"); lb=$(wrk_line "$(cat "$WORK/wrk-b.out")")
    echo "$la $lb" | awk '{printf "%.2f %s %s %d\n", $1 + $5, $2, $3, $4 + $8}' >> "$WORK/runs-two-servers"
    echo "  two-servers: $la | $lb" >&2
    tps=$(pgbench -n -c "$CONNECTIONS" -j "$THREADS" -T "$DURATION" -D users="$USERS" -f "$WORK/pgbench.sql" "$PG_URL" 2>/dev/null \
      | awk '/^tps/ {print $3}')
    echo "$tps - - 0" >> "$WORK/runs-pgbench"
    echo "  pgbench: $tps tps" >&2
  fi
done
echo
python3 - "$WORK" "$BATCH" <<'PY'
import os, sys
w, batch = sys.argv[1], int(sys.argv[2])
def runs(name):
    path = os.path.join(w, "runs-" + name)
    if not os.path.exists(path): return None
    rows = [line.split() for line in open(path) if line.strip()]
    rows.sort(key=lambda r: float(r[0]))
    return rows[len(rows) // 2], sum(int(r[3]) for r in rows)
names = [("echo", "echo (yardstick)", 1), ("stateless", "stateless evaluate", 1), ("batch", f"batch ({batch} items/request)", batch),
         ("stateful-sqlite", "stateful, SQLite", 1), ("stateful-postgres", "stateful, PostgreSQL", 1),
         ("two-servers", "stateful, 2 servers, 1 PostgreSQL", 1), ("pgbench", "pgbench, the same UPDATE", 1)]
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
if "pgbench" in rps:
    print(f"stateful PostgreSQL / pgbench: {rps['stateful-postgres'] / rps['pgbench']:.0%} (target >= 80%)")
    print(f"2 servers / pgbench: {rps['two-servers'] / rps['pgbench']:.0%}")
PY
echo "refused or failed answers (first few per status and thread):" >&2
sort "$WORK/wrk-errors.log" 2>/dev/null | uniq -c | sort -rn | head -10 >&2 || true
