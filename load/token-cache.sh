#!/usr/bin/env bash
# The verified-token cache's memory: a release `policyctl serve` (SQLite) is sent 100,000 and then
# 250,000 distinct users' tokens, each once (GET of the user's session, a 404 after the token is
# verified); its resident memory is read from /proc before and after. The cache keeps at most
# 131,072 tokens (TokenVerifier.cacheLimit), so the second figure stays near the first.
#   bash load/token-cache.sh
# Needs wrk and python3. Not a test: it prints figures.
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-32}
SECRET=load-secret-0123456789abcdef0123456789
. load/lib.sh
release_bin
SESSIONPOLICY_HS256_SECRET=$SECRET SESSIONPOLICY_LOG_LEVEL=error \
  "$BIN/policyctl-serve" --port 18095 --policies policies --storage "sqlite:$WORK/cache.sqlite" >"$WORK/serve.log" 2>&1 &
PID=$!
PIDS+=($PID)
wait_port 18095 healthz
rss() { awk '/VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$PID/status"; }
python3 load/tokens.py "$SECRET" 1000 > "$WORK/warm.txt"
TOKENS=$WORK/warm.txt THREADS=$THREADS wrk -t"$THREADS" -c"$CONNECTIONS" -d3s -s load/once.lua http://127.0.0.1:18095 >/dev/null
echo "resident memory after 1,000 users: $(rss) MiB"
# Requests answered so far (the session GETs, 404s).
answered() { curl -s http://127.0.0.1:18095/metrics | awk '/request_duration_seconds_count.*status="404"/ {n += $2} END {print n + 0}'; }
for count in 100000 250000; do
  PREFIX="c$count-" python3 load/tokens.py "$SECRET" "$count" > "$WORK/tokens-$count.txt"
  expected=$(( $(answered) + count ))
  start=$(date +%s.%N)
  # wrk has no request count: it runs until every token was sent once, then is stopped.
  TOKENS=$WORK/tokens-$count.txt THREADS=$THREADS wrk -t"$THREADS" -c"$CONNECTIONS" -d600s -s load/once.lua \
    http://127.0.0.1:18095 > "$WORK/wrk-$count.txt" &
  WRK=$!
  while [ "$(answered)" -lt "$expected" ]; do sleep 0.5; done
  kill "$WRK" 2>/dev/null || true
  seconds=$(echo "$(date +%s.%N) - $start" | bc)
  echo "resident memory after $count more distinct users: $(rss) MiB (in ${seconds%.*} s)"
done
