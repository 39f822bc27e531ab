// The signed-machine vectors (envelopes.jsonl, keys.jsonl) under `node --test`. They are part of
// the suite: a missing file fails the test, it is never skipped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { runEnvelopeVectors, runKeyVectors } from '../envelope-conformance.mjs';
import { suite } from '../conformance.mjs';

for (const [what, run] of [['envelope', runEnvelopeVectors], ['key', runKeyVectors]]) {
  test(`every ${what} vector passes`, () => {
    const r = run();
    const file = join(suite, what === 'envelope' ? 'envelopes.jsonl' : 'keys.jsonl');
    assert.ok(r.present, `${file} not found: the signed-machine vectors are part of the conformance suite`);
    console.log(`${what} vectors: ${r.passed} passed, ${r.failed} failed`);
    const shown = r.failures.slice(0, 5).map((f) => `${f.id}\n  got  ${f.got}\n  want ${f.want}`);
    assert.equal(r.failed, 0, shown.join('\n'));
    assert.ok(r.passed > 0, `no ${what} vector found`);
  });
}
