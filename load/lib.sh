# Shared by load/run.sh and load/realistic.sh (sourced, from the repository root): a work
# folder and the processes to stop on exit, waiting for a port, and one measured wrk run.
WORK=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT

# Builds the release server and echo server unless BIN names a folder that has them.
release_bin() {
  if [ -z "${BIN:-}" ]; then
    swift build -c release --package-path Server --product policyctl-serve >/dev/null
    swift build -c release --package-path Server --product echo-server >/dev/null
    BIN=$(swift build -c release --package-path Server --show-bin-path)
  fi
}

# wait_port PORT PATH [LOG]: waits up to 10 s for the server; if it never answers, shows the end
# of its LOG (what it printed before it gave up) and stops the script.
wait_port() {
  for _ in $(seq 100); do curl -s "http://127.0.0.1:$1/$2" >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "port $1 did not open" >&2
  if [ -n "${3:-}" ] && [ -f "$3" ]; then echo "-- the last lines of $3:" >&2; tail -n 20 "$3" >&2; fi
  exit 1
}

# reset_pg URL: an empty database for a run (every table of the server's, whatever its version).
reset_pg() { PGOPTIONS="-c client_min_messages=warning" psql "$1" -q -c "DROP SCHEMA public CASCADE; CREATE SCHEMA public" >/dev/null; }

# wrk's output -> "requests/s p50 p99 failed" (failed: non-2xx answers and socket errors).
wrk_line() {
  local out=$1 rps p50 p99 non2xx errors
  rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
  p50=$(echo "$out" | awk '$1=="50%" {print $2}')
  p99=$(echo "$out" | awk '$1=="99%" {print $2}')
  non2xx=$(echo "$out" | awk '/Non-2xx/ {print $5}')
  errors=$(echo "$out" | awk '/Socket errors/ {print $4+$6+$8+$10}')
  echo "$rps $p50 $p99 $(( ${non2xx:-0} + ${errors:-0} ))"
}

# One wrk run (THREADS, CONNECTIONS, DURATION) -> a line appended to $WORK/runs-NAME, and shown.
measure() { # NAME URL [wrk args...]
  local name=$1 url=$2; shift 2
  local line
  line=$(wrk_line "$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency "$@" "$url" 2>>"$WORK/wrk-errors.log")")
  echo "$line" >> "$WORK/runs-$name"
  echo "  $name: $line" >&2
}
