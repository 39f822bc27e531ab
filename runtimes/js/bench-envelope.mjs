// Benchmark of the signed-machine updater: one ECDSA P-256 verification (p256.mjs, pure
// JavaScript), the SHA-256 of the signed bytes, the machine document read, and a whole
// `MachineUpdater.offer`, for an envelope of the i360-salesforce machine signed here with the
// test key a (node:crypto signs; the runtime only verifies). Not a test: it prints figures.
//
//   node bench-envelope.mjs [--rounds 7]
//
// Each figure: the median over rounds of the mean time per call in a round (after a warm-up),
// with every round's figure.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { createPrivateKey, sign } from 'node:crypto';
import { MachineUpdater, PolicyMachine, keyId, sha256 } from './sessionpolicy.mjs';
import { verifyP256, p256KeyFromSPKI, derFromPEM } from './src/p256.mjs';

const args = process.argv.slice(2);
const i = args.indexOf('--rounds');
const ROUNDS = i >= 0 ? Number(args[i + 1]) : 7;
const spec = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'spec', 'conformance');
const pem = readFileSync(join(spec, 'keys', 'a.pub.pem'), 'utf8');
const doc = readFileSync(join(spec, 'machines', 'i360-salesforce.json'), 'utf8');
const machine = PolicyMachine.fromDocument(doc);
const now = Date.UTC(2026, 2, 1);
const b64 = (x) => Buffer.from(x).toString('base64url');
const header = b64(JSON.stringify({ alg: 'ES256', kid: keyId(pem), typ: 'sessionpolicy-machine+jws' }));
const payload = b64(JSON.stringify({
  digest: machine.digest, expires_at: now + 86400000, format: 'sessionpolicy-envelope/1', issued_at: now,
  machine: doc, policy: machine.name, serial: 1,
}));
const signed = new TextEncoder().encode(header + '.' + payload);
const signature = new Uint8Array(sign('sha256', signed, { key: createPrivateKey(readFileSync(join(spec, 'keys', 'a.key.pem'), 'utf8')), dsaEncoding: 'ieee-p1363' }));
const envelope = header + '.' + payload + '.' + b64(signature);
const key = p256KeyFromSPKI(derFromPEM(pem));
const digest = sha256(signed);

function time(label, perRound, f) {
  for (let k = 0; k < perRound; k++) f();
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) {
    const start = process.hrtime.bigint();
    for (let k = 0; k < perRound; k++) f();
    rounds.push(Number(process.hrtime.bigint() - start) / 1e6 / perRound);
  }
  const sorted = [...rounds].sort((a, b) => a - b);
  console.log(`${label.padEnd(44)} ${sorted[sorted.length >> 1].toFixed(2).padStart(7)} ms   (${rounds.map((x) => x.toFixed(2)).join(', ')})`);
}

console.log(`envelope: ${envelope.length} bytes (machine document ${doc.length} bytes); node ${process.version}`);
time('verifyP256 (one ECDSA P-256 verification)', 100, () => {
  if (!verifyP256(key, digest, signature)) throw new Error('does not verify');
});
time('sha256 of the signed bytes', 20, () => sha256(signed));
time('PolicyMachine.fromDocument (check 15)', 10, () => PolicyMachine.fromDocument(doc));
time('MachineUpdater.offer (checks 1-17)', 10, () => {
  if (new MachineUpdater({ policy: machine.name, keys: [pem] }).offer(envelope, now).result !== 'installed') throw new Error('not installed');
});
