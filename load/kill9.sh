#!/usr/bin/env bash
# Fault: kill -9 the server in the middle of a stateful load, restart it on the same store,
# and count every acknowledged event in the store. Each of USERS clients sends its user's
# events one after another and remembers the revision of the last acknowledged one; after the
# restart, a stored revision below it is a lost update; and every stored revision must have
# exactly one record in the decision log (no decision without its record, nor the reverse).
#
#   bash load/kill9.sh                    # SQLite
#   STORAGE=postgres://postgres@127.0.0.1:54329/policytest bash load/kill9.sh
set -euo pipefail
cd "$(dirname "$0")/.."
USERS=${USERS:-32}
SECONDS_BEFORE_KILL=${SECONDS_BEFORE_KILL:-5}
SECRET=load-secret-0123456789abcdef0123456789
WORK=$(mktemp -d)
STORAGE=${STORAGE:-sqlite:$WORK/kill9.sqlite}
PORT=18093
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT

swift build -c release --package-path Server --product policyctl-serve >/dev/null
BIN=$(swift build -c release --package-path Server --show-bin-path)
python3 load/tokens.py "$SECRET" "$USERS" > "$WORK/tokens.txt"

start() {
  SESSIONPOLICY_HS256_SECRET=$SECRET SESSIONPOLICY_LOG_LEVEL=error \
    "$BIN/policyctl-serve" --port $PORT --policies policies --storage "$STORAGE" >>"$WORK/serve.log" 2>&1 &
  PID=$!
  for _ in $(seq 100); do curl -s "http://127.0.0.1:$PORT/healthz" >/dev/null && return 0; sleep 0.1; done
  echo "server did not start" >&2; cat "$WORK/serve.log" >&2; exit 1
}

start
RUN=$(date +%s%N)  # a fresh device id per run, so earlier runs' sessions do not count
python3 - "$WORK/tokens.txt" $PORT "$RUN" "$SECONDS_BEFORE_KILL" "$PID" <<'PY'
import http.client, json, os, signal, sys, threading, time
tokens = [l.split() for l in open(sys.argv[1])]
port, run, before, pid = int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), int(sys.argv[5])
acked, sent = {}, {}
stop = threading.Event()

def client(user, token):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    path = f"/v1/policies/spendiq/sessions/{user}/phone-{run}/events"
    # Dated now: the server refuses events far from its clock (`clock.skew`, `clock.max.delay`).
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    body = json.dumps({"event": {"type": "launch", "time": now, "network": "online"}})
    while not stop.is_set():
        try:
            sent[user] = sent.get(user, 0) + 1
            conn.request("POST", path, body, {"Authorization": "Bearer " + token, "Content-Type": "application/json"})
            r = conn.getresponse()
            data = r.read()
            if r.status == 200:
                acked[user] = json.loads(data)["revision"]
        except Exception:
            return  # the server died: this client stops

threads = [threading.Thread(target=client, args=(u, t)) for u, t in tokens]
for t in threads: t.start()
time.sleep(before)
os.kill(pid, signal.SIGKILL)
stop.set()
for t in threads: t.join()
json.dump({"acked": acked, "sent": sent}, open(os.environ.get("KILL9_OUT", "/tmp/kill9.json"), "w"))
print(f"killed the server (kill -9) after {before:.0f} s: {sum(acked.values())} events acknowledged, {sum(sent.values())} sent")
PY
wait "$PID" 2>/dev/null || true
start
python3 - "$WORK/tokens.txt" $PORT "$RUN" <<'PY'
import http.client, json, sys
sys.path.insert(0, "load")
import logcheck
tokens = dict(l.split() for l in open(sys.argv[1]))
port, run = int(sys.argv[2]), sys.argv[3]
acked = json.load(open("/tmp/kill9.json"))["acked"]
lost = unlogged = records = 0
for user, revision in acked.items():
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    # Stored at least the acknowledged revision; and the decision log one record per stored
    # revision, 1 to the stored one, no more, no fewer.
    missing, logged, exact = logcheck.check_session(
        conn, f"/v1/policies/spendiq/sessions/{user}/phone-{run}", {"Authorization": "Bearer " + tokens[user]}, user, revision)
    lost, records, unlogged = lost + missing, records + logged, unlogged + (not exact)
print(f"after restart: {len(acked)} sessions checked, {lost} acknowledged events lost (target 0)")
print(f"decision log: {records} records, {unlogged} sessions whose records are not exactly revisions 1 to the stored one (target 0)")
sys.exit(1 if lost or unlogged else 0)
PY
