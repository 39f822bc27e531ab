#!/usr/bin/env bash
# Scale (issue 38 §2): the realistic workload (load/workload.lua) and history pages on a store
# filled to size, beside the same on a small store, in alternating rounds of one run.
#
#   PG_URL=postgres://postgres@127.0.0.1:54329/policytest bash load/size.sh   # PostgreSQL and SQLite
#   STORES=sqlite bash load/size.sh
#
# Each store is filled as a server of this release leaves it after RETENTION_DAYS of traffic:
# SESSIONS sessions (users fill-0 ..., one device each, on the seven shipped policies in turn,
# each state a real one of its policy), each with RECORDS / SESSIONS decision records chained by
# `previous`, received evenly across the RETENTION_DAYS days before now (so on PostgreSQL across
# that many day partitions). The small store gets SMALL_SESSIONS sessions of the same shape. Then
# both serve the same workload (USERS new users, load-0 ...) and history pages (load/history.lua,
# the back end's token) of random filled sessions (records spread over the retention: on disk
# when the store is larger than memory) and of the workload's sessions (records of the last
# minutes). Last: the time to drop the oldest day's
# partition, alone and under load, and the bytes a session and a record take.
#
# Env: STORES ("postgres sqlite"; postgres needs PG_URL: its databases NAME_size_big and
# NAME_size_small are created beside it), SESSIONS (PostgreSQL 10000000), RECORDS (100000000),
# SQLITE_SESSIONS (1000000), SQLITE_RECORDS (10000000), SMALL_SESSIONS (10000), RETENTION_DAYS
# (90), USERS (100000), DURATION (s per run, 10), ROUNDS (3), THREADS (2), CONNECTIONS (32; the
# events'), HISTORY_CONNECTIONS (4: history pages are read now and then, by support staff and the
# back end, so their latency is measured with a few readers at once, not at saturation), BIN,
# KEEP (1: reuse the stores a previous run filled, when their counts match).
# Needs wrk, python3, sqlite3, and for PostgreSQL psql. Not a test: it prints figures.
set -euo pipefail
cd "$(dirname "$0")/.."
STORES=${STORES:-postgres sqlite}
SESSIONS=${SESSIONS:-10000000}
RECORDS=${RECORDS:-100000000}
SQLITE_SESSIONS=${SQLITE_SESSIONS:-1000000}
SQLITE_RECORDS=${SQLITE_RECORDS:-10000000}
SMALL_SESSIONS=${SMALL_SESSIONS:-10000}
RETENTION_DAYS=${RETENTION_DAYS:-90}
USERS=${USERS:-100000}
DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-32}
HISTORY_CONNECTIONS=${HISTORY_CONNECTIONS:-4}
KEEP=${KEEP:-0}
SECRET=load-secret-0123456789abcdef0123456789
SERVICE_SECRET=load-service-secret-0123456789abcdef0123
FILLS=${FILLS:-/var/tmp/sessionpolicy-size}  # the SQLite files, kept for KEEP=1
. load/lib.sh
SCRIPT_START=$(date +%s)
export THREADS SCRIPT_START
[[ " $STORES " == *" postgres "* ]] && [ -z "${PG_URL:-}" ] && { echo "postgres needs PG_URL (or STORES=sqlite)" >&2; exit 64; }
release_bin
mkdir -p "$FILLS"
python3 load/tokens.py "$SECRET" "$USERS" > "$WORK/tokens.txt"
SERVICE_TOKEN=$(python3 load/tokens.py "$SERVICE_SECRET" 1 | awk '{print $2}')
export SERVICE_TOKEN
NOW_MS=$(( $(date +%s) * 1000 ))
DAY_MS=86400000
TODAY_MS=$(( NOW_MS - NOW_MS % DAY_MS ))

serve() { # PORT STORAGE
  SESSIONPOLICY_HS256_SECRET=$SECRET SESSIONPOLICY_SERVICE_HS256_SECRET=$SERVICE_SECRET SESSIONPOLICY_LOG_LEVEL=error \
    "$BIN/policyctl-serve" --port "$1" --policies policies --storage "$2" --clock-max-delay 400d >"$WORK/serve-$1.log" 2>&1 &
  PIDS+=($!)
  wait_port "$1" healthz "$WORK/serve-$1.log"
}

# A real state of each shipped policy, as the server stores it: one session of each, signed in,
# on a throwaway server (the fill's sessions hold them).
capture_states() {
  serve 18290 "sqlite:$WORK/states.sqlite"
  for p in kobil-offline-token kobil-signed-jwt kobil-signed-jwt-hardware spendiq i360-salesforce i360-marketsharp cross-app-device-sso; do
    curl -s -o /dev/null -X POST "http://127.0.0.1:18290/v1/policies/$p/sessions/capture/phone/events" \
      -H "Authorization: Bearer $SERVICE_TOKEN" -H 'Content-Type: application/json' \
      -d "{\"event\":{\"type\":\"idp_login_succeeded\",\"user\":\"capture\",\"auth_mode\":\"password\",\"network\":\"online\",\"time\":\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\"}}"
  done
  kill "${PIDS[-1]}"; wait "${PIDS[-1]}" 2>/dev/null || true
  sqlite3 "$WORK/states.sqlite" "SELECT policy, state FROM sessions ORDER BY policy" > "$WORK/states.txt"
  [ "$(wc -l < "$WORK/states.txt")" = 7 ] || { echo "could not capture the seven policies' states" >&2; cat "$WORK/states.txt" >&2; exit 1; }
}

# The fill's SQL, shared by both databases: its sessions' policy, the time of record J of session
# I (evenly over the retention, never after now), and the states captured.
policy_sql="(ARRAY['kobil-offline-token','kobil-signed-jwt','kobil-signed-jwt-hardware','spendiq','i360-salesforce','i360-marketsharp','cross-app-device-sso'])[i % 7 + 1]"
time_sql() { # I J K
  echo "($NOW_MS - $RETENTION_DAYS::int8 * $DAY_MS + ($2)::int8 * ($RETENTION_DAYS::int8 * $DAY_MS / $3) + (($1)::int8 * 2654435761) % ($RETENTION_DAYS::int8 * $DAY_MS / $3))"
}
states_values() { # the captured states as VALUES rows (policy, state), quoted for SQL
  python3 - "$WORK/states.txt" <<'PY'
import sys
rows = [line.rstrip("\n").split("|", 1) for line in open(sys.argv[1])]
print(",".join("('%s', '%s')" % (p, s.replace("'", "''")) for p, s in rows))
PY
}

fill_postgres() { # URL SESSIONS RECORDS
  local url=$1 n=$2 total=$3 k=$(( $3 / $2 )) chunk=1000000 from
  reset_pg "$url"
  "$BIN/policyctl-serve" migrate --storage "$url" >/dev/null
  # The day partitions the records span, as the servers make them (PostgresStore+Partitions.swift).
  psql "$url" -q -v ON_ERROR_STOP=1 >/dev/null <<SQL
SELECT format('CREATE TABLE %I (LIKE decisions INCLUDING DEFAULTS)', name), format('ALTER TABLE %I ADD CONSTRAINT %I PRIMARY KEY (id)', name, name || '_pkey'),
  format('ALTER TABLE decisions ATTACH PARTITION %I FOR VALUES FROM (%s) TO (%s)', name, lo, lo + $DAY_MS)
FROM (SELECT lo, 'decisions_' || to_char(to_timestamp(lo / 1000) AT TIME ZONE 'UTC', 'YYYYMMDD') AS name
  FROM generate_series($TODAY_MS - $RETENTION_DAYS::int8 * $DAY_MS, $TODAY_MS, $DAY_MS) lo) d \gexec
SQL
  psql "$url" -q -v ON_ERROR_STOP=1 -c "CREATE TABLE fill_states (policy TEXT PRIMARY KEY, state TEXT); INSERT INTO fill_states VALUES $(states_values)" >/dev/null
  for (( from = 0; from < n; from += chunk )); do
    local to=$(( from + chunk < n ? from + chunk : n ))
    psql "$url" -q -v ON_ERROR_STOP=1 >/dev/null <<SQL
SET synchronous_commit = off;
INSERT INTO decisions (id, policy, digest, user_id, device_id, revision, event_time, server_time, event, network, decision,
  reason, notices, transition, state, previous, amr, actor, request_id, previous_time)
SELECT i * $k + j + 1, $policy_sql, 'sha256:4c9e1f0a6b3d2e8f7a5c4b3a2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e', 'fill-' || i, 'phone',
  j + 1, $(time_sql i j "$k") - 1500, $(time_sql i j "$k"), 'launch', 'online', 'allow', 'within_limits', '', 3, 'active',
  CASE WHEN j > 0 THEN i * $k + j END, NULL, 'user:fill-' || i, to_hex(i * $k + j + 1000000007),
  CASE WHEN j > 0 THEN $(time_sql i "j - 1" "$k") END
FROM generate_series($from, $to - 1) i CROSS JOIN generate_series(0, $k - 1) j;
INSERT INTO sessions (policy, user_id, device_id, state, revision, updated_at, last_decision, last_decision_time, last_decision_time_of)
SELECT $policy_sql, 'fill-' || i, 'phone', (SELECT state FROM fill_states f WHERE f.policy = $policy_sql), $k,
  $(time_sql i "$k - 1" "$k"), i * $k + $k, $(time_sql i "$k - 1" "$k"), i * $k + $k
FROM generate_series($from, $to - 1) i;
SQL
    echo "  filled $to of $n sessions ($(date +%T))" >&2
  done
  psql "$url" -q -v ON_ERROR_STOP=1 -c "SELECT setval('decision_ids', $(( n * k + 1 )))" -c "DROP TABLE fill_states" -c "VACUUM ANALYZE" >/dev/null
}

fill_sqlite() { # FILE SESSIONS RECORDS
  local file=$1 n=$2 k=$(( $3 / $2 ))
  rm -f "$file" "$file-wal" "$file-shm"
  "$BIN/policyctl-serve" migrate --storage "sqlite:$file" >/dev/null
  local policy
  # SQLite's integer arithmetic, the same times as PostgreSQL's.
  t() { echo "($NOW_MS - $RETENTION_DAYS * $DAY_MS + ($2) * ($RETENTION_DAYS * $DAY_MS / $3) + (($1) * 2654435761) % ($RETENTION_DAYS * $DAY_MS / $3))"; }
  policy="(SELECT policy FROM fill_states WHERE n = i % 7)"
  sqlite3 "$file" >/dev/null <<SQL
PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF;
CREATE TEMP TABLE fill_states (n INTEGER PRIMARY KEY, policy TEXT, state TEXT);
INSERT INTO fill_states (n, policy, state)
SELECT CASE column1 WHEN 'kobil-offline-token' THEN 0 WHEN 'kobil-signed-jwt' THEN 1 WHEN 'kobil-signed-jwt-hardware' THEN 2
  WHEN 'spendiq' THEN 3 WHEN 'i360-salesforce' THEN 4 WHEN 'i360-marketsharp' THEN 5 ELSE 6 END, column1, column2
FROM (VALUES $(states_values));
BEGIN;
WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < $n - 1), r(j) AS (SELECT 0 UNION ALL SELECT j + 1 FROM r WHERE j < $k - 1)
INSERT INTO decisions (id, policy, digest, user_id, device_id, revision, event_time, server_time, event, network, decision,
  reason, notices, transition, state, previous, amr, actor, request_id)
SELECT i * $k + j + 1, $policy, 'sha256:4c9e1f0a6b3d2e8f7a5c4b3a2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e', 'fill-' || i, 'phone',
  j + 1, $(t i j "$k") - 1500, $(t i j "$k"), 'launch', 'online', 'allow', 'within_limits', '', 3, 'active',
  CASE WHEN j > 0 THEN i * $k + j END, NULL, 'user:fill-' || i, printf('%x', i * $k + j + 1000000007)
FROM s, r;
WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < $n - 1)
INSERT INTO sessions (policy, user_id, device_id, state, revision, updated_at, last_decision)
SELECT $policy, 'fill-' || i, 'phone', (SELECT state FROM fill_states WHERE n = i % 7), $k, $(t i "$k - 1" "$k"), i * $k + $k FROM s;
COMMIT;
PRAGMA wal_checkpoint(TRUNCATE);
SQL
}

# A store filled as asked, unless KEEP=1 and it already is.
filled() { # postgres|sqlite URL|FILE SESSIONS RECORDS
  local kind=$1 have count="SELECT count(*) FROM sessions WHERE user_id LIKE 'fill-%'"
  shift
  if [ "$kind" = postgres ]; then have=$(psql "$1" -qtA -c "$count" 2>/dev/null || echo 0)
  else have=$(sqlite3 "$1" "$count" 2>/dev/null || echo 0); fi
  if [ "$KEEP" = 1 ] && [ "$have" = "$2" ]; then echo "  keeping $1 ($have filled sessions)" >&2; return; fi
  echo "  filling $1: $2 sessions, $3 records ($(date +%T))" >&2
  local s=$SECONDS
  "fill_$kind" "$@"
  echo "  filled in $(( SECONDS - s )) s" >&2
}

capture_states
PORTS=()
for store in $STORES; do
  if [ "$store" = postgres ]; then
    base=${PG_URL%/*}; name=${PG_URL##*/}; name=${name%%\?*}
    for size in big small; do
      psql "$PG_URL" -qtA -c "SELECT 1 FROM pg_database WHERE datname = '${name}_size_$size'" | grep -q 1 \
        || psql "$PG_URL" -q -c "CREATE DATABASE ${name}_size_$size" >/dev/null
    done
    BIG_PG="$base/${name}_size_big"; SMALL_PG="$base/${name}_size_small"
    filled postgres "$SMALL_PG" "$SMALL_SESSIONS" $(( SMALL_SESSIONS * (RECORDS / SESSIONS) ))
    filled postgres "$BIG_PG" "$SESSIONS" "$RECORDS"
    serve 18291 "$SMALL_PG"; serve 18292 "$BIG_PG"
    PORTS+=("postgres-small:18291:$SMALL_SESSIONS" "postgres-big:18292:$SESSIONS")
  else
    filled sqlite "$FILLS/small.sqlite" "$SMALL_SESSIONS" $(( SMALL_SESSIONS * (SQLITE_RECORDS / SQLITE_SESSIONS) ))
    filled sqlite "$FILLS/big.sqlite" "$SQLITE_SESSIONS" "$SQLITE_RECORDS"
    serve 18293 "sqlite:$FILLS/small.sqlite"; serve 18294 "sqlite:$FILLS/big.sqlite"
    PORTS+=("sqlite-small:18293:$SMALL_SESSIONS" "sqlite-big:18294:$SQLITE_SESSIONS")
  fi
done

# Warm-up, not counted: each server's first events of the workload's sessions (a first event
# writes a new row), and history pages.
for entry in "${PORTS[@]}"; do
  IFS=: read -r label port n <<<"$entry"
  FIRST=1 TOKENS=$WORK/tokens.txt MODE=stateful wrk -t"$THREADS" -c"$CONNECTIONS" -d"${WARMUP:-5}s" -s load/workload.lua "http://127.0.0.1:$port" >/dev/null 2>&1
  SESSIONS=$n wrk -t"$THREADS" -c"$CONNECTIONS" -d2s -s load/history.lua "http://127.0.0.1:$port" >/dev/null 2>&1
done

echo "wrk -t$THREADS -c$CONNECTIONS (history: -c$HISTORY_CONNECTIONS) -d${DURATION}s on loopback, release builds, $(nproc) cores, $USERS workload users, median of $ROUNDS rounds"
echo "$(free -g | awk '/Mem:/ {print $2}') GB of memory$([ -n "${BIG_PG:-}" ] && psql "$BIG_PG" -qtA -c "SELECT ', PostgreSQL ' || current_setting('server_version') || ', shared_buffers ' || current_setting('shared_buffers') || ', the big database ' || pg_size_pretty(pg_database_size(current_database()))")"
for round in $(seq "$ROUNDS"); do
  echo "round $round/$ROUNDS" >&2
  for entry in "${PORTS[@]}"; do
    IFS=: read -r label port n <<<"$entry"
    TOKENS=$WORK/tokens.txt MODE=stateful measure "events-$label" "http://127.0.0.1:$port" -s load/workload.lua
    SESSIONS=$n CONNECTIONS=$HISTORY_CONNECTIONS measure "history-$label" "http://127.0.0.1:$port" -s load/history.lua
    WHICH=active USERS=$USERS CONNECTIONS=$HISTORY_CONNECTIONS measure "active-$label" "http://127.0.0.1:$port" -s load/history.lua
  done
done

if [[ " $STORES " == *" postgres "* ]]; then
  # A whole day's partition dropped (the second oldest: the oldest holds part of a day), alone;
  # then the next one while the big store serves events.
  oldest() { psql "$BIG_PG" -qtA -c "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = 'decisions'::regclass AND c.relname LIKE 'decisions_2%' ORDER BY c.relname LIMIT 1 OFFSET 1"; }
  drop_ms() { psql "$BIG_PG" -qtA -c '\timing on' -c "DROP TABLE $1" | awk '/^Time/ {print $2}'; }
  part=$(oldest); rows=$(psql "$BIG_PG" -qtA -c "SELECT count(*) FROM $part")
  echo "drop $part ($rows records), alone: $(drop_ms "$part") ms" > "$WORK/drops"
  part=$(oldest); rows=$(psql "$BIG_PG" -qtA -c "SELECT count(*) FROM $part")
  TOKENS=$WORK/tokens.txt MODE=stateful wrk -t"$THREADS" -c"$CONNECTIONS" -d6s --latency -s load/workload.lua http://127.0.0.1:18292 \
    > "$WORK/drop-wrk.out" 2>&1 &
  loaded=$!
  wal0=$(psql "$BIG_PG" -qtA -c "SELECT pg_current_wal_lsn()")
  sleep 3
  ms=$(drop_ms "$part")
  wait "$loaded"
  wal=$(psql "$BIG_PG" -qtA -c "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '$wal0')")
  line=$(wrk_line "$(cat "$WORK/drop-wrk.out")")
  echo "drop $part ($rows records), under load: $ms ms; that 6 s run's events (requests/s p50 p99 failed): $line" >> "$WORK/drops"
  echo "WAL written during that run: $(awk -v w="$wal" -v r="${line%% *}" 'BEGIN {printf "%.0f bytes per event (%.1f MB/s)", w / (r * 6), w / 6 / 1e6}')" >> "$WORK/drops"
  psql "$BIG_PG" -qtA -F ' ' > "$WORK/bytes-pg" <<SQL
SELECT pg_total_relation_size('sessions') / (SELECT count(*) FROM sessions),
  ((SELECT sum(pg_total_relation_size(i.inhrelid)) FROM pg_inherits i WHERE i.inhparent = 'decisions'::regclass) / (SELECT count(*) FROM decisions))::int8;
SQL
fi
if [[ " $STORES " == *" sqlite "* ]]; then
  file=$FILLS/big.sqlite
  if sqlite3 "$file" "SELECT 1 FROM dbstat LIMIT 1" >/dev/null 2>&1; then
    sqlite3 -separator ' ' "$file" "SELECT (SELECT sum(pgsize) FROM dbstat WHERE name IN ('sessions','sqlite_autoindex_sessions_1','sessions_by_user')) / (SELECT count(*) FROM sessions),
      (SELECT sum(pgsize) FROM dbstat WHERE name IN ('decisions','decisions_by_time')) / (SELECT count(*) FROM decisions)" > "$WORK/bytes-sqlite"
  else
    echo "$(( $(stat -c %s "$file") / (SQLITE_SESSIONS + SQLITE_RECORDS) )) (file bytes per row, no dbstat)" > "$WORK/bytes-sqlite"
  fi
fi

echo
python3 - "$WORK" <<'PY'
import os, sys
w = sys.argv[1]
sys.path.insert(0, "load")
from medians import median as _median
def median(name): return _median(w, name)
print(f"| {'store':16} | {'events/s':>9} | {'p50':>8} | {'p99':>8} | {'filled pages/s':>14} | {'p50':>8} | {'p99':>8} "
      f"| {'active pages/s':>14} | {'p50':>8} | {'p99':>8} | {'failed':>6} |")
print(f"|{'-' * 18}|{'-' * 11}|{'-' * 10}|{'-' * 10}|{'-' * 16}|{'-' * 10}|{'-' * 10}|{'-' * 16}|{'-' * 10}|{'-' * 10}|{'-' * 8}|")
got = {}
for label in ["postgres-small", "postgres-big", "sqlite-small", "sqlite-big"]:
    e, h, a = median("events-" + label), median("history-" + label), median("active-" + label)
    if e is None: continue
    got[label] = (float(e[0][0]), float(h[0][0]))
    print(f"| {label:16} | {float(e[0][0]):9,.0f} | {e[0][1]:>8} | {e[0][2]:>8} | {float(h[0][0]):14,.0f} | {h[0][1]:>8} | {h[0][2]:>8} "
          f"| {float(a[0][0]):14,.0f} | {a[0][1]:>8} | {a[0][2]:>8} | {e[1] + h[1] + a[1]:6} |")
print()
for kind in ["postgres", "sqlite"]:
    if kind + "-big" in got:
        (eb, hb), (es, hs) = got[kind + "-big"], got[kind + "-small"]
        print(f"{kind}: big / small events/s {eb / es:.0%}, filled history pages/s {hb / hs:.0%}")
for name, what in [("drops", None), ("bytes-pg", "PostgreSQL bytes per session, per record (tables and indexes)"),
                   ("bytes-sqlite", "SQLite bytes per session, per record (tables and indexes)")]:
    path = os.path.join(w, name)
    if os.path.exists(path):
        text = open(path).read().strip()
        print(f"{what}: {text}" if what else text)
PY
