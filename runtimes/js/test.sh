#!/bin/sh
# Runs the JavaScript runtime's tests: `node --test` (conformance, documents, SHA-256, API,
# P-256, the machine updater), the type check of sessionpolicy.d.ts when `tsc` is installed, the
# conformance suite on its own, whose last line is "N passed, N failed", and the signed-machine
# vectors ("envelope vectors: N passed, N failed", "key vectors: ..."; a missing envelopes.jsonl
# or keys.jsonl fails). Exits non-zero on any failure.
set -u
cd "$(dirname "$0")" || exit 2
status=0

echo "== node --test"
node --test || status=1

if command -v tsc >/dev/null 2>&1; then
  echo "== tsc --noEmit --strict types-check.ts ($(tsc --version))"
  tsc --noEmit --strict --target es2022 --module node16 --moduleResolution node16 types-check.ts || status=1
elif [ -n "${CI:-}" ]; then
  echo "== tsc not found: CI needs it for the type check (Debian: apt-get install -y node-typescript)" >&2
  status=1
else
  echo "== tsc not found: type check skipped"
fi

echo "== conformance suite"
node conformance.mjs || status=1

echo "== signed-machine vectors"
node envelope-conformance.mjs || status=1
exit $status
