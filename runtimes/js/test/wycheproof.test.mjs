// ECDSA P-256 / SHA-256 verification (src/p256.mjs) against Project Wycheproof's vectors for
// signatures encoded as r || s (IEEE P1363), the encoding of an envelope's signature
// (docs/envelope.md): spec/wycheproof/ecdsa_secp256r1_sha256_p1363_test.json, every vector. A
// `valid` one must verify, an `invalid` one must not; an `acceptable` one (the file has none)
// may do either, and is counted apart. Each public key is read as a pinned key is
// (`p256KeyFromSPKI`), and the message hashed with the runtime's own SHA-256.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { verifyP256, p256KeyFromSPKI } from '../src/p256.mjs';
import { sha256 } from '../sessionpolicy.mjs';

const file = fileURLToPath(new URL('../../../spec/wycheproof/ecdsa_secp256r1_sha256_p1363_test.json', import.meta.url));
const hex = (s) => Uint8Array.from(s.match(/../g) ?? [], (h) => parseInt(h, 16));

/** Runs every vector: `{passed, failed, acceptable, failures}`. */
export function runWycheproof() {
  const suite = JSON.parse(readFileSync(file, 'utf8'));
  let passed = 0;
  let acceptable = 0;
  const failures = [];
  for (const group of suite.testGroups) {
    assert.equal(group.sha, 'SHA-256');
    const key = p256KeyFromSPKI(hex(group.publicKeyDer));
    for (const t of group.tests) {
      const verified = verifyP256(key, sha256(hex(t.msg)), hex(t.sig));
      if (t.result === 'acceptable') acceptable += 1;
      else if (verified === (t.result === 'valid')) passed += 1;
      else failures.push(`tcId ${t.tcId} (${t.comment}; ${t.flags.join(', ')}): ${t.result}, but ${verified ? 'verified' : 'refused'}`);
    }
  }
  return { total: suite.numberOfTests, passed, failed: failures.length, acceptable, failures };
}

test('Wycheproof ECDSA P-256 SHA-256 (P1363): every vector gets its expected result', (t) => {
  const r = runWycheproof();
  t.diagnostic(`wycheproof vectors: ${r.passed} passed, ${r.failed} failed, ${r.acceptable} acceptable`);
  assert.deepEqual(r.failures, []);
  assert.equal(r.passed + r.acceptable, r.total);
  assert.ok(r.total >= 250, `only ${r.total} vectors`);
});
