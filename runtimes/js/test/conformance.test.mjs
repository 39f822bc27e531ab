// The conformance suite under `node --test`: every machine, every vector, byte for byte.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runConformance } from '../conformance.mjs';

test('every conformance vector passes, byte for byte', () => {
  const r = runConformance();
  console.log(`${r.passed} passed, ${r.failed} failed`);
  const shown = r.failures.slice(0, 5).map((f) => `${f.machine}: ${f.id}\n  got  ${f.got}\n  want ${f.want}`);
  assert.equal(r.failed, 0, shown.join('\n'));
  // Seven shipped policies and a conformance-only one, 24,072 vectors: a suite that lost its
  // files must not pass by running nothing.
  assert.ok(r.perMachine.length >= 7, `only ${r.perMachine.length} machines found`);
  assert.ok(r.passed >= 24000, `only ${r.passed} vectors found`);
});
