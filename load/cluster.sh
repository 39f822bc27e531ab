#!/usr/bin/env bash
# Several servers on one PostgreSQL behind nginx (issue 38 §2): SERVERS `policyctl-serve`
# processes, each on its own port, behind Debian's nginx, round robin. Measures stateful events
# (load/stateful.lua) through nginx to all of them, beside one server directly and one server
# through nginx (what nginx itself costs), and nginx to all of them with each user kept on one
# server (`hash` by the path's user: what round robin's write conflicts cost), in alternating
# rounds, median of ROUNDS; counts the PostgreSQL connections each server holds meanwhile. Then
# `kill -9` of one server under load through nginx: USERS clients each send their own session's
# events one after another, remember the last acknowledged revision, and go on through the
# failures like an app (a failed request is counted, its session read back, the next event sent);
# at the end every acknowledged revision must be stored and every session's decision log must
# hold exactly revisions 1 to the stored one (as load/kill9.sh). Exits 1 if not.
#
#   PG_URL=postgres://postgres@127.0.0.1:54329/clustertest bash load/cluster.sh
#
# Env: PG_URL (required; its tables are dropped first), BIN (a folder with a release
# policyctl-serve; default: build it), SERVERS (4), DURATION (s per wrk run, 10), ROUNDS (3),
# WARMUP (s of events per path before measuring, 3), THREADS (2), CONNECTIONS (32; wrk's users:
# 1,000 per path), USERS (clients of the kill -9 run, 32), SECONDS_BEFORE_KILL (5),
# SECONDS_AFTER_KILL (8: load on the others after the kill, past nginx's fail_timeout of 5 s, when
# it tries the dead server again), POOL_MAX (`--store-pool-max` of each server; default the
# server's, 16).
# Needs nginx (Debian's nginx-light will do; run unprivileged from the work folder), wrk, python3,
# psql and ss. Not a test of figures: it prints them; the kill -9 check is a test.
#
# PostgreSQL connections: each server has one pool of at most `store.pool.max` connections (16),
# opened as its operations need them and closed after 60 s idle; N servers open at most
# N x store.pool.max, and that, plus one for a `policyctl-serve migrate` and your own tools, must
# fit in `max_connections` less `superuser_reserved_connections` (docs/storage.md). The script
# prints what it saw (pg_stat_activity, each connection matched to its server by its client port).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${PG_URL:?PG_URL names the PostgreSQL database to use (its tables are dropped)}"
SERVERS=${SERVERS:-4}
DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
WARMUP=${WARMUP:-3}
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-32}
USERS=${USERS:-32}
SECONDS_BEFORE_KILL=${SECONDS_BEFORE_KILL:-5}
SECONDS_AFTER_KILL=${SECONDS_AFTER_KILL:-8}
POOL_MAX=${POOL_MAX:-}
SECRET=load-secret-0123456789abcdef0123456789
FIRST_PORT=18300     # servers: 18301, 18302, ...
NGINX_ALL=18290      # nginx, round robin over every server
NGINX_ONE=18291      # nginx, the first server alone
NGINX_HASH=18292     # nginx, every server, each user on one (hash of the path's user)
. load/lib.sh
for tool in nginx wrk psql ss python3; do
  command -v "$tool" >/dev/null || { echo "cluster.sh needs $tool" >&2; exit 1; }
done

release_bin

# Users: one set per path, so that the one-server rows keep the first server's view of its
# sessions fresh, and the kill -9 run's sessions are new.
PREFIX=one- python3 load/tokens.py "$SECRET" 1000 > "$WORK/tokens-one.txt"
PREFIX=rr- python3 load/tokens.py "$SECRET" 1000 > "$WORK/tokens-rr.txt"
PREFIX=hash- python3 load/tokens.py "$SECRET" 1000 > "$WORK/tokens-hash.txt"
PREFIX=kill- python3 load/tokens.py "$SECRET" "$USERS" > "$WORK/tokens-kill.txt"

port_of() { echo $((FIRST_PORT + $1)); }
SERVER_PIDS=()
serve() { # INDEX (1-based)
  local port; port=$(port_of "$1")
  SESSIONPOLICY_HS256_SECRET=$SECRET SESSIONPOLICY_LOG_LEVEL=error \
    "$BIN/policyctl-serve" --port "$port" --policies policies --storage "$PG_URL" ${POOL_MAX:+--store-pool-max "$POOL_MAX"} \
    >"$WORK/serve-$port.log" 2>&1 &
  PIDS+=($!)
  SERVER_PIDS[$1]=$!
}

reset_pg "$PG_URL"
# The first alone, so that it applies the migrations; then the others, which find them applied.
serve 1
wait_port "$(port_of 1)" healthz "$WORK/serve-$(port_of 1).log"
for i in $(seq 2 "$SERVERS"); do serve "$i"; done
for i in $(seq 2 "$SERVERS"); do wait_port "$(port_of "$i")" healthz "$WORK/serve-$(port_of "$i").log"; done

# nginx as a user would put it in front, but unprivileged: everything it writes is in the work
# folder. Choices:
# - `keepalive 64` with HTTP/1.1 and an empty Connection header: nginx keeps connections to the
#   servers open instead of one per request; `keepalive_timeout 50s`, below the server's
#   `http.idle.timeout` (60 s), so that nginx never sends a request on a connection the server is
#   closing as idle (a POST lost that way would be answered 502, see below).
# - `proxy_next_upstream error timeout` (nginx's default, written out): a request goes to the
#   next server when connecting fails (the killed server's port refuses) and, for GET, when the
#   server fails before answering. Not `non_idempotent`, not `http_502`/`http_503`: an event POST
#   that reached a server may have been committed before the server died (or before its 503: a
#   store write that timed out may still commit, docs/storage.md). The event route has no
#   idempotency key: its conditional write makes concurrent events of one session safe, but a
#   second copy of an event already committed is a new event against the new revision and
#   would be applied twice. So nginx must not resend it; it answers 502 and the client, who
#   can read the session's revision back (GET), decides. nginx never resends a POST once sent
#   unless told `non_idempotent`.
# - `max_fails=1 fail_timeout=5s`: after one failure a server gets no requests for 5 s, then one
#   try (a refused connect costs nothing to the request, which goes to the next server).
mkdir -p "$WORK/nginx"
{
  [ "$(id -u)" = 0 ] && echo "user $(id -un) $(id -gn);"  # as root, workers would otherwise be nobody
  upstream_servers() { for i in $(seq "$SERVERS"); do echo "    server 127.0.0.1:$(port_of "$i") max_fails=1 fail_timeout=5s;"; done; }
  cat <<NGINX
worker_processes auto;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log warn;
events { worker_connections 4096; }
http {
  client_body_temp_path $WORK/nginx/body;
  proxy_temp_path $WORK/nginx/proxy;
  fastcgi_temp_path $WORK/nginx/fastcgi;
  uwsgi_temp_path $WORK/nginx/uwsgi;
  scgi_temp_path $WORK/nginx/scgi;
  # Logged: requests that failed or that nginx passed to a second server (a comma in the address).
  log_format cluster '\$msec \$request_method \$status "\$upstream_addr" "\$upstream_status"';
  map "\$status \$upstream_addr" \$cluster_log { "~^[23][0-9][0-9] [^,]+\$" 0; default 1; }
  access_log $WORK/nginx/access.log cluster if=\$cluster_log;
  keepalive_requests 1000000;
  proxy_http_version 1.1;
  proxy_set_header Connection "";
  proxy_set_header Host \$host;
  proxy_next_upstream error timeout;
  proxy_connect_timeout 2s;
  proxy_read_timeout 30s;
  map \$uri \$session_user { "~^/v1/policies/[^/]+/sessions/(?<u>[^/]+)" \$u; default \$uri; }
  upstream all_servers {
$(upstream_servers)
    keepalive 64;
    keepalive_requests 1000000;
    keepalive_timeout 50s;
  }
  upstream one_server {
    server 127.0.0.1:$(port_of 1);
    keepalive 64;
    keepalive_requests 1000000;
    keepalive_timeout 50s;
  }
  upstream hashed_servers {
    hash \$session_user consistent;
$(upstream_servers)
    keepalive 64;
    keepalive_requests 1000000;
    keepalive_timeout 50s;
  }
  server { listen 127.0.0.1:$NGINX_ALL; location / { proxy_pass http://all_servers; } }
  server { listen 127.0.0.1:$NGINX_ONE; location / { proxy_pass http://one_server; } }
  server { listen 127.0.0.1:$NGINX_HASH; location / { proxy_pass http://hashed_servers; } }
}
NGINX
} > "$WORK/nginx/nginx.conf"
nginx -t -q -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx" -g 'daemon off;'
nginx -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx" -g 'daemon off;' >"$WORK/nginx/stderr.log" 2>&1 &
PIDS+=($!)
wait_port $NGINX_ALL healthz "$WORK/nginx/error.log"
wait_port $NGINX_ONE healthz "$WORK/nginx/error.log"
wait_port $NGINX_HASH healthz "$WORK/nginx/error.log"

# Every half second: the servers' PostgreSQL connections (pg_stat_activity, application_name
# `sessionpolicy`), each matched to its server by its client port (ss). One line per sample:
# time, open in all, active in all (running a statement), open per server, active per server.
cat > "$WORK/pgwatch.py" <<'PY'
import re, subprocess, sys, time
url, out, pids = sys.argv[1], sys.argv[2], [int(p) for p in sys.argv[3:]]
query = ("select client_port, state from pg_stat_activity where datname = current_database() "
         "and application_name = 'sessionpolicy' and client_port is not null")
with open(out, "a") as f:
    while True:
        try:
            rows = [l.split("|") for l in subprocess.run(["psql", url, "-Atc", query], capture_output=True, text=True,
                                                          timeout=5).stdout.split()]
            ports = [int(p) for p, _ in rows]
            active = [int(p) for p, state in rows if state == "active"]
            owner = {}
            for line in subprocess.run(["ss", "-tnpH"], capture_output=True, text=True, timeout=5).stdout.splitlines():
                m = re.search(r"\S+:(\d+)\s+\S+:\d+\s+users:.*?pid=(\d+)", line)
                if m: owner[int(m.group(1))] = int(m.group(2))
            per = [sum(1 for p in ports if owner.get(p) == pid) for pid in pids]
            per_active = [sum(1 for p in active if owner.get(p) == pid) for pid in pids]
            f.write(f"{time.time():.2f} {len(ports)} {len(active)} {' '.join(map(str, per + per_active))}\n")
            f.flush()
        except Exception as e:
            print(e, file=sys.stderr)
        time.sleep(0.5)
PY
python3 "$WORK/pgwatch.py" "$PG_URL" "$WORK/pg-samples" "${SERVER_PIDS[@]}" 2>"$WORK/pgwatch.err" &
PIDS+=($!)

# Write conflicts of every server (conditional writes that found their row changed), to compare paths.
conflicts() {
  local total=0 n
  for i in $(seq "$SERVERS"); do
    n=$(curl -s "http://127.0.0.1:$(port_of "$i")/metrics" | awk '/^sessionpolicy_store_write_conflicts_total/ {s += $2} END {print s + 0}')
    total=$((total + ${n%.*}))
  done
  echo "$total"
}
row() { # NAME PORT TOKENS
  local c0 c1 t0
  c0=$(conflicts); t0=$(date +%s.%N)
  TOKENS=$3 measure "$1" "http://127.0.0.1:$2" -s load/stateful.lua
  c1=$(conflicts)
  echo "$1 $t0 $(date +%s.%N) $((c1 - c0))" >> "$WORK/windows"
}

# Warm-up, not counted: the first events create the sessions' rows.
for path in "$(port_of 1) one" "$NGINX_ALL rr" "$NGINX_HASH hash"; do
  set -- $path
  TOKENS=$WORK/tokens-$2.txt wrk -t"$THREADS" -c"$CONNECTIONS" -d"${WARMUP}s" -s load/stateful.lua "http://127.0.0.1:$1" >/dev/null
done

echo "wrk -t$THREADS -c$CONNECTIONS -d${DURATION}s on loopback, release builds, $(nproc) cores, $SERVERS servers on one" \
  "PostgreSQL, nginx $(nginx -v 2>&1 | sed 's|.*/||'), median of $ROUNDS rounds"
for round in $(seq "$ROUNDS"); do
  echo "round $round/$ROUNDS" >&2
  row one-direct "$(port_of 1)" "$WORK/tokens-one.txt"
  row one-nginx $NGINX_ONE "$WORK/tokens-one.txt"
  row all-nginx $NGINX_ALL "$WORK/tokens-rr.txt"
  row all-nginx-hash $NGINX_HASH "$WORK/tokens-hash.txt"
done
echo
python3 - "$WORK" "$SERVERS" "$DURATION" <<'PY'
import os, sys
w, servers, duration = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
samples = [list(map(float, l.split())) for l in open(os.path.join(w, "pg-samples")) if l.strip()]
windows = [l.split() for l in open(os.path.join(w, "windows"))]
def runs(name):
    rows = [l.split() for l in open(os.path.join(w, "runs-" + name)) if l.strip()]
    return rows
labels = [("one-direct", "1 server, direct"), ("one-nginx", "1 server, through nginx"),
          ("all-nginx", f"{servers} servers, nginx round robin"), ("all-nginx-hash", f"{servers} servers, nginx hash by user")]
print(f"| {'what':32} | {'events/s':>9} | {'p50':>8} | {'p99':>8} | {'failed':>6} | {'conflicts/event':>15} | {'PG connections open (per server)':32} | {'most active':>11} |")
print(f"|{'-' * 34}|{'-' * 11}|{'-' * 10}|{'-' * 10}|{'-' * 8}|{'-' * 17}|{'-' * 34}|{'-' * 13}|")
rps = {}
for key, label in labels:
    rows = runs(key)
    ordered = sorted(rows, key=lambda r: float(r[0]))
    median = ordered[len(ordered) // 2]
    failed = sum(int(r[3]) for r in rows)
    mine = [x for x in windows if x[0] == key]
    events = sum(float(r[0]) * duration for r in rows)
    conflicts = sum(int(x[3]) for x in mine) / events if events else 0
    inside = [s for s in samples if any(float(x[1]) <= s[0] <= float(x[2]) for x in mine)]
    total = max((int(s[1]) for s in inside), default=0)
    active = max((int(s[2]) for s in inside), default=0)
    per = [max((int(s[3 + i]) for s in inside), default=0) for i in range(servers)]
    rps[key] = float(median[0])
    print(f"| {label:32} | {float(median[0]):9,.0f} | {median[1]:>8} | {median[2]:>8} | {failed:6} | {conflicts:15.2f} | "
          f"{str(total) + ' (' + ' '.join(map(str, per)) + ')':32} | {active:11} |")
print("(connections: the most seen at once in each row's runs; a pool keeps a connection 60 s after its last use,"
      " so a server idle in one row still holds what it opened in the row before)")
print()
print(f"{servers} servers round robin / 1 server direct: {rps['all-nginx'] / rps['one-direct']:.0%}; "
      f"/ 1 server through nginx: {rps['all-nginx'] / rps['one-nginx']:.0%}; "
      f"hash by user / 1 server direct: {rps['all-nginx-hash'] / rps['one-direct']:.0%}; "
      f"nginx's cost on 1 server: {1 - rps['one-nginx'] / rps['one-direct']:.0%}")
PY
pool=$(curl -s "http://127.0.0.1:$(port_of 1)/metrics" | awk '/^sessionpolicy_store_pool_connections\{state="max"\}/ {print $2}')
pool=${pool:-16}  # the server's default, should the gauge be missing
read -r max_conn reserved < <(psql "$PG_URL" -Atc "select current_setting('max_connections'), current_setting('superuser_reserved_connections')" | tr '|' ' ')
echo "PostgreSQL sizing: $SERVERS servers x store.pool.max ${pool%.*} = $((SERVERS * ${pool%.*})) at most, + 1 for a migrate and your tools," \
  "<= max_connections $max_conn - superuser_reserved_connections $reserved = $((max_conn - reserved))"

# kill -9 of the last server under load through nginx (round robin), the others carry on.
KILLED=${SERVER_PIDS[$SERVERS]}
disown "$KILLED"  # no job notice from bash when it dies; cleanup still kills it by its id
RUN=$(date +%s%N)  # a fresh device id per run
KILL_START=$(date +%s.%N)
echo
python3 - "$WORK/tokens-kill.txt" $NGINX_ALL "$RUN" "$SECONDS_BEFORE_KILL" "$SECONDS_AFTER_KILL" "$KILLED" "$WORK/kill.json" <<'PY'
import collections, http.client, json, os, signal, sys, threading, time
tokens = [l.split() for l in open(sys.argv[1])]
port, run, before, after, pid, out = int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6]), sys.argv[7]
acked, known = {}, {}                   # last revision acknowledged by a POST; last read back by a GET
acked_times = []                        # when each acknowledgement came
failures = collections.Counter()        # failed POSTs, by status or exception
unanswered_committed = 0                # failed POSTs whose event the read-back found stored
lock = threading.Lock()
stop = threading.Event()

def client(user, token):
    global unanswered_committed
    headers = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
    path = f"/v1/policies/spendiq/sessions/{user}/phone-{run}"
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    body = json.dumps({"event": {"type": "launch", "time": now, "network": "online"}})
    while not stop.is_set():
        try:
            conn.request("POST", path + "/events", body, headers)
            r = conn.getresponse()
            data = r.read()
            if r.status == 200:
                with lock:
                    acked[user] = json.loads(data)["revision"]
                    acked_times.append(time.time())
                continue
            why = str(r.status)
        except Exception as e:
            why = type(e).__name__
        with lock: failures[why] += 1
        # Like an app: a fresh connection, a short pause, and read the session back (the failed
        # event may have been committed: then it is not sent again), then go on.
        conn.close()
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        time.sleep(0.05)
        try:
            conn.request("GET", path, headers=headers)
            r = conn.getresponse()
            data = r.read()
            if r.status == 200:
                revision = json.loads(data)["revision"]
                with lock:
                    if revision > max(acked.get(user, 0), known.get(user, 0)): unanswered_committed += 1
                    known[user] = revision
        except Exception:
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)

threads = [threading.Thread(target=client, args=(u, t)) for u, t in tokens]
start = time.time()
for t in threads: t.start()
time.sleep(before)
killed_at = time.time()
os.kill(pid, signal.SIGKILL)
time.sleep(after)
stop.set()
for t in threads: t.join()
end = time.time()
n_before = sum(1 for t in acked_times if t < killed_at)
n_after = len(acked_times) - n_before
json.dump({"acked": acked, "known": known}, open(out, "w"))
print(f"kill -9 of one server (pid {pid}) after {before:.0f} s of {len(tokens)} clients through nginx, {after:.0f} s more on the others:")
print(f"  {len(acked_times)} events acknowledged: {n_before} before the kill ({n_before / (killed_at - start):,.0f}/s), "
      f"{n_after} after it ({n_after / (end - killed_at):,.0f}/s)")
print(f"  {sum(failures.values())} failed requests: {dict(failures) or 'none'}; "
      f"{unanswered_committed} of them committed all the same (found stored when read back)")
PY
echo "kill $KILL_START $(date +%s.%N) 0" >> "$WORK/windows"
# What nginx did in that run: requests it passed to another server, and answers that were not 2xx.
awk -v t="$KILL_START" '$1 >= t { retried += ($4 ~ /,/); if ($3 !~ /^[23]/) bad[$2 " " $3 " upstream " $4 " " $5]++ }
     END { printf "  nginx: %d requests passed to another server after a failure\n", retried;
           for (k in bad) printf "  nginx answered %s: %d\n", k, bad[k] }' "$WORK/nginx/access.log"
# nginx's error log: what it met at the killed server (for how many requests).
{ sed -E 's/^.*\*[0-9]+ //; s/, client:.*//' "$WORK/nginx/error.log" | sort | uniq -c | sort -rn \
    | sed 's/^ */  nginx error log: /' | head -5; } || true
python3 - "$WORK/pg-samples" "$WORK/windows" "$SERVERS" <<'PY'
import sys
samples = [l.split() for l in open(sys.argv[1]) if l.strip()]
t0, t1 = [(float(x[1]), float(x[2])) for x in (l.split() for l in open(sys.argv[2])) if x[0] == "kill"][0]
inside = [s for s in samples if t0 <= float(s[0]) <= t1]
n = int(sys.argv[3])
per = [max(int(s[3 + i]) for s in inside) for i in range(n)]
print(f"  PostgreSQL connections during the run (most seen): {max(int(s[1]) for s in inside)} open ({' '.join(map(str, per))} per server),"
      f" {max(int(s[2]) for s in inside)} active; at its end: {inside[-1][1]} ({' '.join(inside[-1][3:3 + n])})")
PY

# The check, through nginx: every acknowledged revision stored, each decision log exactly 1 to it.
python3 - "$WORK/tokens-kill.txt" $NGINX_ALL "$RUN" "$WORK/kill.json" <<'PY'
import http.client, json, sys
sys.path.insert(0, "load")
import logcheck
tokens = dict(l.split() for l in open(sys.argv[1]))
port, run = int(sys.argv[2]), sys.argv[3]
result = json.load(open(sys.argv[4]))
acked, known = result["acked"], result["known"]
lost = unlogged = records = 0
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
for user in sorted(set(acked) | set(known)):  # the sessions that got at least one event
    revision = max(acked.get(user, 0), known.get(user, 0))
    headers = {"Authorization": "Bearer " + tokens[user]}
    missing, logged, exact = logcheck.check_session(conn, f"/v1/policies/spendiq/sessions/{user}/phone-{run}", headers, user, revision)
    lost, records, unlogged = lost + missing, records + logged, unlogged + (not exact)
print(f"  {len(set(acked) | set(known))} sessions checked through nginx: {lost} acknowledged events lost (target 0)")
print(f"  decision log: {records} records, {unlogged} sessions whose records are not exactly revisions 1 to the stored one (target 0)")
sys.exit(1 if lost or unlogged else 0)
PY
