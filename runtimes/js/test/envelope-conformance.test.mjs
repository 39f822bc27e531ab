// The signed-machine vectors (envelopes.jsonl, keys.jsonl) under `node --test`; skipped while
// the suite does not hold them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runEnvelopeVectors, runKeyVectors } from '../envelope-conformance.mjs';

for (const [what, run] of [['envelope', runEnvelopeVectors], ['key', runKeyVectors]]) {
  test(`every ${what} vector passes`, (t) => {
    const r = run();
    if (!r.present) {
      t.skip(`no ${what === 'envelope' ? 'envelopes' : 'keys'}.jsonl in the conformance suite`);
      return;
    }
    console.log(`${what} vectors: ${r.passed} passed, ${r.failed} failed`);
    const shown = r.failures.slice(0, 5).map((f) => `${f.id}\n  got  ${f.got}\n  want ${f.want}`);
    assert.equal(r.failed, 0, shown.join('\n'));
    assert.ok(r.passed > 0, `no ${what} vector found`);
  });
}
