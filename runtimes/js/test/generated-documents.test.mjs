// The generated machine documents (spec/conformance/generated-documents.jsonl): every one is
// refused with the Swift engine's code or accepted with its digest; and the file is what
// spec/conformance/generate-documents.mjs writes (the results aside, which the Swift engine writes).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runGeneratedDocuments, applyOps } from '../generated-documents.mjs';
import { suite } from '../conformance.mjs';
import { generate, withoutResult } from '../../../spec/conformance/generate-documents.mjs';

test('the generated documents are the generator\'s, each with a result', () => {
  const committed = readFileSync(join(suite, 'generated-documents.jsonl'), 'utf8').split('\n').filter((l) => l !== '');
  assert.deepEqual(committed.map(withoutResult), generate(), 'run node spec/conformance/generate-documents.mjs, then record with the Swift engine');
  const unrecorded = committed.filter((l) => withoutResult(l) === l);
  assert.deepEqual(unrecorded.slice(0, 3), [], `${unrecorded.length} lines without a result: RECORD_SNAPSHOTS=1 swift test --disable-xctest --filter GeneratedDocumentTests`);
});

test('JSON Patch operations leave the base document as it was', () => {
  const base = { a: [1, 2, { b: 3 }], c: { d: null } };
  const text = JSON.stringify(base);
  const out = applyOps(base, [
    { op: 'remove', path: '/a/0' },
    { op: 'replace', path: '/a/1/b', value: 4 },
    { op: 'copy', from: '/c', path: '/a/-' },
    { op: 'add', path: '/c/e~1f', value: [] },
  ]);
  assert.equal(JSON.stringify(base), text);
  assert.deepEqual(out, { a: [2, { b: 4 }, { d: null }], c: { d: null, 'e/f': [] } });
});

test('every generated document is read as the Swift engine reads it', (t) => {
  const r = runGeneratedDocuments();
  t.diagnostic(`generated documents: ${r.passed} passed, ${r.failed} failed`);
  assert.deepEqual(r.failures.slice(0, 20), []);
  assert.ok(r.passed >= 500, `only ${r.passed} generated documents`);
});
