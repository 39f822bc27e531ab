#!/usr/bin/env bash
# Fails if `CompiledPolicy.evaluate` allocates: runs the `evaluate/` and `evaluate-in-place/` benchmarks (release build)
# and checks that every "Malloc (total)" percentile, p0 to p100, is 0. Used by .ci/run.
set -euo pipefail
cd "$(dirname "$0")"
out=$(mktemp)
swift package benchmark --no-progress --format markdown --filter 'evaluate(-in-place)?/.*' --metric mallocCountTotal --scale | tee "$out"
python3 - "$out" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
bad, seen = [], 0
for part in re.split(r"\n### ", text)[1:]:
    name = part.split("\n")[0].split()[0]
    for line in part.split("\n"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0].startswith("Malloc (total)"):
            seen += 1
            if any(c != "0" for c in cells[1:8]):
                bad.append(f"{name}: {cells[1:8]}")
if seen == 0:
    sys.exit("check-allocations: no malloc figures found in the benchmark output")
if bad:
    sys.exit("evaluate allocates:\n" + "\n".join(bad))
print(f"check-allocations: {seen} evaluate benchmarks, 0 allocations at every percentile")
PY
