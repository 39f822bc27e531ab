#!/usr/bin/env bash
# Installs the Debian package on this machine, runs its server as the systemd unit would, and
# removes it again:
#   bash packaging/test-deb.sh [.build-packages/sessionpolicy_VERSION_amd64.deb]
# As root (or with sudo). Refuses to run where sessionpolicy is already installed. Steps:
#  1. dpkg -i; the files are where the package says (secrets.env mode 0600, owner root);
#     systemd-analyze verify on the installed unit; every binary prints VERSION for --version.
#  2. Runs the unit's ExecStart line by hand as the unit would (no systemd needed): its
#     EnvironmentFile= files read in order, as an unprivileged user (nobody, standing for the
#     unit's DynamicUser) that cannot read secrets.env, with its UMask, in its state directory
#     (made as StateDirectory= makes it), with no new privileges. One change: SESSIONPOLICY_PORT=0,
#     a free port instead of 8080, which another server of this machine may hold.
#  3. GET /healthz is 200 "ok"; one stateless decision (POST /v1/policies/spendiq/evaluate) is the
#     one the installed policyctl makes from the installed policy; the SQLite file is in the
#     state directory. SIGTERM: the server stops, exit 0.
#  4. dpkg -r: the binaries and the unit are gone, the configuration stays (conffiles), nothing
#     runs; dpkg -P: /etc/sessionpolicy and the state directory are gone.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=$(cat VERSION)
DEB=${1:-.build-packages/sessionpolicy_${VERSION}_amd64.deb}
DEB=$(cd "$(dirname "$DEB")" && pwd)/$(basename "$DEB")
if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
fail() { echo "test-deb: FAILED: $*" >&2; exit 1; }
[ -f "$DEB" ] || fail "no $DEB: run packaging/build.sh first"
if dpkg -s sessionpolicy >/dev/null 2>&1; then
  fail "sessionpolicy is installed on this machine already; this test installs and removes it"
fi
WORK=$(mktemp -d)
chmod 0755 "$WORK"
PID=
cleanup() {
  if [ -n "$PID" ]; then $SUDO kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; fi
  if dpkg -s sessionpolicy >/dev/null 2>&1; then $SUDO dpkg -P sessionpolicy >/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

echo "== dpkg -i $(basename "$DEB")"
$SUDO dpkg -i "$DEB"
for f in /usr/bin/policyctl /usr/bin/policyctl-serve /usr/bin/policyctl-sessions /lib/systemd/system/sessionpolicy.service \
  /etc/sessionpolicy/sessionpolicy.env /etc/sessionpolicy/secrets.env /etc/sessionpolicy/policies/spendiq.yaml \
  /usr/share/doc/sessionpolicy/copyright; do
  [ -e "$f" ] || fail "$f is not installed"
done
[ "$(stat -c '%a %U %G' /etc/sessionpolicy/secrets.env)" = "600 root root" ] || fail "secrets.env is not mode 600, owner root"
for b in policyctl policyctl-serve policyctl-sessions; do
  [ "$("/usr/bin/$b" --version)" = "$VERSION" ] || fail "$b --version is not $VERSION"
done
UNIT=/lib/systemd/system/sessionpolicy.service
SYSTEMD_LOG_LEVEL=notice systemd-analyze verify "$UNIT" || fail "systemd-analyze verify refuses the installed unit"
echo "   installed; systemd-analyze verify $UNIT: clean"

echo "== the unit's ExecStart, by hand, as the unit runs it"
# The unit's own settings, read from the installed file.
setting() { sed -n "s/^$1=//p" "$UNIT"; }
exec_start=$(setting ExecStart)
state_dir=/var/lib/$(setting StateDirectory)
umask_value=$(setting UMask)
[ "$(setting DynamicUser)" = yes ] && [ "$(setting NoNewPrivileges)" = yes ] && [ "$(setting ProtectSystem)" = strict ] \
  || fail "the unit lost DynamicUser, NoNewPrivileges or ProtectSystem=strict"
env_args=()
while read -r file; do
  while IFS= read -r line; do
    case "$line" in '#'* | '') continue ;; esac
    env_args+=("$line")
  done < "$file"
done < <(setting EnvironmentFile)
as_service() { $SUDO setpriv --reuid=nobody --regid=nogroup --clear-groups --no-new-privs "$@"; }
if as_service cat /etc/sessionpolicy/secrets.env >/dev/null 2>&1; then fail "the service's user can read secrets.env"; fi
$SUDO install -d -m 0700 -o nobody -g nogroup "$state_dir"
# setpriv, env and a shell for cd and umask each exec the next, so $! is the server itself
# (with sudo, sudo's, which passes signals on). Not through as_service: a shell function in the
# background is a subshell of its own, and $! would be that subshell's.
$SUDO setpriv --reuid=nobody --regid=nogroup --clear-groups --no-new-privs \
  env -i PATH=/usr/bin:/bin "${env_args[@]}" SESSIONPOLICY_PORT=0 \
  sh -c 'cd "$1" && umask "$2" && shift 2 && exec "$@"' sh "$state_dir" "$umask_value" $exec_start \
  >"$WORK/serve.out" 2>"$WORK/serve.log" &
PID=$!
PORT=
for _ in $(seq 300); do
  PORT=$(sed -n 's|^listening on http://[^:]*:\([0-9][0-9]*\)$|\1|p' "$WORK/serve.out" | head -1)
  [ -n "$PORT" ] && break
  kill -0 "$PID" 2>/dev/null || { cat "$WORK/serve.log" >&2; fail "the server exited"; }
  sleep 0.1
done
[ -n "$PORT" ] || { cat "$WORK/serve.log" >&2; fail "the server did not say where it listens"; }
server_pid=$(pgrep -n -x policyctl-serve -u nobody)
echo "   $(head -1 "$WORK/serve.out"), as user $(ps -o user= -p "$server_pid"), process $server_pid"

echo "== /healthz and one decision"
health=$(curl -s -o "$WORK/health.json" -w '%{http_code}' "http://127.0.0.1:$PORT/healthz")
[ "$health" = 200 ] || { cat "$WORK/health.json" >&2; fail "/healthz answered $health"; }
grep -q '"status" *: *"ok"' "$WORK/health.json" || { cat "$WORK/health.json" >&2; fail "/healthz is not ok"; }
echo "   GET /healthz: 200 $(head -c 120 "$WORK/health.json")"
event='{"type": "launch", "time": "2026-03-01T09:00:00Z", "network": "offline"}'
status=$(curl -s -o "$WORK/decision.json" -w '%{http_code}' -X POST "http://127.0.0.1:$PORT/v1/policies/spendiq/evaluate" \
  -H 'Content-Type: application/json' -d "{\"event\": $event}")
[ "$status" = 200 ] || { cat "$WORK/decision.json" >&2; fail "evaluate answered $status"; }
decision() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const o=JSON.parse(s);const x=o.outcome||o;console.log(x.decision+" "+x.reason)})'; }
served=$(decision < "$WORK/decision.json")
echo "{\"event\": $event}" > "$WORK/input.json"
local_decision=$(/usr/bin/policyctl eval /etc/sessionpolicy/policies/spendiq.yaml "$WORK/input.json" | decision)
[ "$served" = "$local_decision" ] || fail "the server decides \`$served\`, policyctl eval \`$local_decision\`"
echo "   POST /v1/policies/spendiq/evaluate (launch, offline, signed out): $served, as policyctl eval decides"
$SUDO test -f "$state_dir/sessionpolicy.sqlite" || fail "no SQLite store in $state_dir"

$SUDO kill -TERM "$PID"
code=0; wait "$PID" || code=$?
PID=
[ "$code" = 0 ] || { cat "$WORK/serve.log" >&2; fail "the server exited $code on SIGTERM"; }
if kill -0 "$server_pid" 2>/dev/null; then fail "the server (process $server_pid) still runs after SIGTERM"; fi
grep -q 'msg=stopped' "$WORK/serve.log" || { cat "$WORK/serve.log" >&2; fail "the server did not log that it stopped"; }
echo "   SIGTERM: stopped, exit 0"

echo "== dpkg -r, then dpkg -P"
$SUDO dpkg -r sessionpolicy >/dev/null
for f in /usr/bin/policyctl /usr/bin/policyctl-serve /usr/bin/policyctl-sessions "$UNIT"; do
  [ ! -e "$f" ] || fail "$f is still there after dpkg -r"
done
[ -f /etc/sessionpolicy/sessionpolicy.env ] || fail "dpkg -r removed the configuration (conffiles stay until a purge)"
if pgrep -x policyctl-serve >/dev/null; then
  pgrep -a -x policyctl-serve >&2
  echo "   (a policyctl-serve runs: another of this machine's, or this test's)" >&2
  pgrep -f "^/usr/bin/policyctl-serve" >/dev/null && fail "the installed policyctl-serve still runs after dpkg -r"
fi
echo "   removed: no binary, no unit, no /usr/bin/policyctl-serve running; the configuration stays"
$SUDO dpkg -P sessionpolicy >/dev/null
[ ! -e /etc/sessionpolicy ] || fail "/etc/sessionpolicy is still there after dpkg -P"
[ ! -e "$state_dir" ] || fail "$state_dir is still there after dpkg -P"
echo "   purged: /etc/sessionpolicy and $state_dir are gone"
echo "test-deb: passed"
