#!/usr/bin/env bash
# The HTTP API against its own contract: schemathesis (from PyPI, in a virtualenv under
# .build-contract/) generates requests from docs/openapi.yaml, valid and invalid, sends them
# to a running `policyctl serve`, and checks every answer against the document: no 5xx, the
# status, content type, headers and body each documented, invalid input refused, valid input
# accepted, 405 for a method a path does not take. Once on SQLite, and once on PostgreSQL when
# PG_URL is set. From the repository root:
#   bash load/contract.sh                          # SQLite
#   PG_URL=postgres://... bash load/contract.sh    # and PostgreSQL
# MAX_EXAMPLES (per operation and phase, default 40); BIN: a folder with policyctl-serve
# (default: the debug build, built here). The server gets what the document's requests can
# use: a user token for `alice` and a service token (load/contract.toml says which operations
# use which), a pool `acme` and its secret, the app `com.acme.bank` bound to
# `cross-app-device-sso`. A stored session's events are dated around the server's clock (the
# window of `--clock-skew` and `--clock-max-delay`, which no schema can state): their times come
# from .build-contract/times.dict, written here.
set -euo pipefail
cd "$(dirname "$0")/.."
MAX_EXAMPLES=${MAX_EXAMPLES:-40}
VENV=.build-contract/venv
SECRET=contract-secret-0123456789abcdef0123456789
SERVICE_SECRET=contract-service-secret-0123456789abcdef0
. load/lib.sh

if [ ! -x "$VENV/bin/schemathesis" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "schemathesis==4.32.5"
fi
if [ -z "${BIN:-}" ]; then
  swift build --package-path Server --product policyctl-serve >/dev/null
  BIN=$(swift build --package-path Server --show-bin-path)
fi

export USER_TOKEN SERVICE_TOKEN
USER_TOKEN=$(python3 load/tokens.py "$SECRET" 1 alice | awk '{print $2}')
SERVICE_TOKEN=$(python3 load/tokens.py "$SERVICE_SECRET" 1 back-end | awk '{print $2}')

mkdir -p .build-contract
python3 - > .build-contract/times.dict <<'PY'
import datetime
now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
for delta in (datetime.timedelta(0), datetime.timedelta(minutes=-5), datetime.timedelta(hours=-3), datetime.timedelta(days=-6)):
    print('"%s"' % (now + delta).strftime("%Y-%m-%dT%H:%M:%SZ"))
PY

failed=0
run() { # NAME STORAGE PORT
  SESSIONPOLICY_HS256_SECRET=$SECRET SESSIONPOLICY_SERVICE_HS256_SECRET=$SERVICE_SECRET SESSIONPOLICY_LOG_LEVEL=error \
    "$BIN/policyctl-serve" --port "$3" --policies policies --storage "$2" --pool acme:acme-pool-secret \
    --app com.acme.bank:cross-app-device-sso --clock-skew 10m --clock-max-delay 7d \
    --signing-key spec/conformance/keys/a.key.pem \
    >".build-contract/serve-$1.log" 2>&1 &
  PIDS+=($!)
  wait_port "$3" healthz ".build-contract/serve-$1.log"
  echo "== schemathesis against docs/openapi.yaml, $1"
  if ! CONTRACT_URL="http://127.0.0.1:$3" "$VENV/bin/schemathesis" --config-file load/contract.toml run docs/openapi.yaml \
      --url "http://127.0.0.1:$3" --max-examples "$MAX_EXAMPLES" --seed 1 --no-color --output-truncate false \
      >".build-contract/contract-$1.txt" 2>&1; then
    failed=1
  fi
  # The summary's figures: cases generated and passed, and failures by check.
  grep -A1 -E "^(Test cases|Failures):" ".build-contract/contract-$1.txt" | grep -E "generated|❌" || true
  [ "$failed" = 0 ] || sed -n "/= FAILURES =/,/= WARNINGS =/p" ".build-contract/contract-$1.txt"
}
run sqlite "sqlite:$WORK/contract.sqlite" 18301
if [ -n "${PG_URL:-}" ]; then
  reset_pg "$PG_URL"
  run postgres "$PG_URL" 18302
fi
exit $failed
