// MachineUpdater (docs/envelope.md): envelopes signed here with node:crypto and the test keys
// of spec/conformance/keys, one or more for each of the checks 1 to 17, and what the vectors
// cannot hold (an envelope over 4 MiB, no key, the machine kept after every refusal).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createPrivateKey, sign as nodeSign } from 'node:crypto';
import { MachineUpdater, PolicyMachine, SessionPolicyError, keyId, sha256Hex, ENVELOPE_FORMAT } from '../sessionpolicy.mjs';
import { P256_ORDER } from '../src/p256.mjs';

const spec = (path) => fileURLToPath(new URL(`../../../spec/conformance/${path}`, import.meta.url));
const pub = (name) => readFileSync(spec(`keys/${name}.pub.pem`), 'utf8');
const priv = (name) => createPrivateKey(readFileSync(spec(`keys/${name}.key.pem`), 'utf8'));
const b64 = (x) => Buffer.from(x).toString('base64url');

const DOC = readFileSync(spec('machines/i360-salesforce.json'), 'utf8');
const MACHINE = PolicyMachine.fromDocument(DOC);
const POLICY = MACHINE.name;

/** The canonical text of a JSON value (keys sorted; the machine documents hold ASCII keys). */
const canonical = (v) =>
  v === null || typeof v !== 'object'
    ? JSON.stringify(v)
    : Array.isArray(v)
      ? '[' + v.map(canonical).join(',') + ']'
      : '{' + Object.keys(v).filter((k) => v[k] !== undefined).sort().map((k) => JSON.stringify(k) + ':' + canonical(v[k])).join(',') + '}';

/** The same machine with another description: another digest, the same name. */
function variant(description, name = POLICY) {
  const d = JSON.parse(DOC);
  d.description = description;
  d.name = name;
  delete d.digest;
  d.digest = 'sha256:' + sha256Hex(canonical(d));
  const text = canonical(d);
  return { text, digest: PolicyMachine.fromDocument(text).digest };
}
const OTHER = variant('another machine of the same policy');
assert.notEqual(OTHER.digest, MACHINE.digest);

const NOW = Date.UTC(2026, 2, 1, 9, 0, 0);
const DAY = 86400000;
const TOLERANCE = 600000;

function payloadOf(over = {}) {
  return {
    digest: MACHINE.digest,
    expires_at: NOW + 30 * DAY,
    format: ENVELOPE_FORMAT,
    issued_at: NOW - DAY,
    machine: DOC,
    policy: POLICY,
    serial: 1000,
    ...over,
  };
}

/**
 * An envelope: `payload` (an object, or text as it is), signed with `key` (default a) and named
 * `kid` (default the signing key's id); `header` replaces the header's members or text;
 * `signature` rewrites the 64 bytes (or is the segment's text if a string).
 */
function make({ payload = {}, key = 'a', kid, header, signature } = {}) {
  const h = typeof header === 'string'
    ? header
    : canonical({ alg: 'ES256', kid: kid ?? keyId(pub(key)), typ: 'sessionpolicy-machine+jws', ...header });
  const p = typeof payload === 'string' ? payload : canonical(payloadOf(payload));
  const signed = b64(h) + '.' + b64(p);
  let sig = new Uint8Array(nodeSign('sha256', Buffer.from(signed), { key: priv(key), dsaEncoding: 'ieee-p1363' }));
  if (typeof signature === 'function') sig = signature(sig);
  return signed + '.' + (typeof signature === 'string' ? signature : b64(sig));
}

const updater = (keys = ['a'], tolerance) =>
  new MachineUpdater({ policy: POLICY, keys: keys.map(pub), ...(tolerance === undefined ? {} : { tolerance }) });

const GOOD = make();

/** The result's code (`installed`, `unchanged`, or the refusal's code) of offering `envelope`. */
function offered(envelope, { keys, now = NOW, held } = {}) {
  const u = updater(keys);
  if (held !== undefined) assert.equal(u.offer(held, now).result, 'installed');
  const r = u.offer(envelope, now);
  return r.result === 'refused' ? r.code : r.result;
}

test('a good envelope is installed: the machine, serial, digest, key id and the text to store', () => {
  const u = updater();
  assert.equal(u.current, null);
  assert.equal(u.machine, null);
  const r = u.offer(GOOD + '\n', NOW);
  assert.equal(r.result, 'installed');
  assert.equal(r.machine.digest, MACHINE.digest);
  assert.equal(r.serial, 1000);
  assert.equal(r.digest, MACHINE.digest);
  assert.equal(r.envelope, GOOD + '\n'); // exactly as given, the line feed included
  const c = u.current;
  assert.deepEqual(
    { policy: c.policy, serial: c.serial, issuedAt: c.issuedAt, expiresAt: c.expiresAt, digest: c.digest, keyId: c.keyId, envelope: c.envelope },
    { policy: POLICY, serial: 1000, issuedAt: NOW - DAY, expiresAt: NOW + 30 * DAY, digest: MACHINE.digest, keyId: keyId(pub('a')), envelope: GOOD + '\n' },
  );
  assert.equal(u.machine, c.machine);
  assert.ok(c.machine instanceof PolicyMachine);
  assert.equal(c.machine.document, MACHINE.document);
  assert.ok(Object.isFrozen(c) && Object.isFrozen(r));
});

test('the envelope as bytes, an ArrayBuffer, or text with white space around it', () => {
  const bytes = new TextEncoder().encode(' \t\r\n' + GOOD + '\r\n');
  assert.equal(offered(bytes), 'installed');
  assert.equal(offered(bytes.buffer), 'installed');
  assert.equal(offered(Buffer.from(GOOD)), 'installed');
  assert.equal(offered('\n' + GOOD + ' '), 'installed');
  assert.throws(() => updater().offer(42, NOW), TypeError);
  assert.throws(() => updater().offer(GOOD, '2026-03-01'), TypeError);
  assert.throws(() => updater().offer(GOOD, 1.5), TypeError);
});

test('the envelope is handed back exactly as it was given, white space included', () => {
  const around = ' \t\r\n' + GOOD + '\r\n  \n';
  // Text: the same string, in the result and in `current`, from an offer and from a restore.
  for (const read of [(u, e) => u.offer(e, NOW), (u, e) => u.restore(e)]) {
    const u = updater();
    const r = read(u, around);
    assert.equal(r.result, 'installed');
    assert.equal(r.envelope, around);
    assert.equal(u.current.envelope, around);
  }
  // Bytes (a Uint8Array, a Buffer, an ArrayBuffer, a view into a larger buffer): their text, whose
  // UTF-8 is exactly the bytes given.
  const bytes = new TextEncoder().encode(around);
  const larger = new Uint8Array(bytes.length + 10);
  larger.set(bytes, 5);
  for (const given of [bytes, Buffer.from(around), bytes.slice().buffer, larger.subarray(5, 5 + bytes.length)]) {
    const u = updater();
    const r = u.offer(given, NOW);
    assert.equal(r.result, 'installed');
    assert.equal(typeof r.envelope, 'string');
    assert.equal(r.envelope, around);
    assert.deepEqual(new TextEncoder().encode(r.envelope), bytes);
    assert.equal(u.current.envelope, around);
  }
  // What is handed back restores at the next start, and is handed back as it is again.
  const stored = updater().offer(bytes, NOW).envelope;
  const next = updater();
  assert.equal(next.restore(stored).envelope, around);
  // A later install hands back its own text, as given (no white space this time).
  const later = make({ payload: { serial: 1001 } });
  assert.equal(next.offer(later, NOW).envelope, later);
  assert.equal(next.current.envelope, later);
});

test('1: more than 4 MiB is envelope-too-large, before anything else is read', () => {
  const limit = 4 * 1024 * 1024;
  assert.equal(offered(new Uint8Array(limit + 1)), 'envelope-too-large');
  assert.equal(offered('x'.repeat(limit + 1)), 'envelope-too-large');
  assert.equal(offered('é'.repeat(limit / 2 + 1)), 'envelope-too-large'); // 2 bytes each in UTF-8
  assert.equal(offered(GOOD + ' '.repeat(limit + 1 - GOOD.length)), 'envelope-too-large'); // white space counts
  assert.equal(offered(GOOD + ' '.repeat(limit - GOOD.length)), 'installed'); // exactly 4 MiB
  assert.equal(offered(new Uint8Array(limit)), 'envelope-malformed');
});

test('2: three base64url segments, no padding, no stray bits, header and payload not empty', () => {
  const [h, p, s] = GOOD.split('.');
  assert.equal(offered(h + '.' + p), 'envelope-malformed');
  assert.equal(offered(GOOD + '.'), 'envelope-malformed');
  assert.equal(offered(GOOD + '.' + s), 'envelope-malformed');
  assert.equal(offered('.' + p + '.' + s), 'envelope-malformed');
  assert.equal(offered(h + '..' + s), 'envelope-malformed');
  assert.equal(offered(''), 'envelope-malformed');
  assert.equal(offered(' \n '), 'envelope-malformed');
  assert.equal(offered('..'), 'envelope-malformed');
  assert.equal(offered(h + '.' + p + '.' + s + '=='), 'envelope-malformed'); // padding
  assert.equal(offered(h + '.' + p + '.' + Buffer.from(s, 'base64url').toString('base64')), 'envelope-malformed');
  assert.equal(offered(h + '.' + p + ' .' + s), 'envelope-malformed'); // white space inside
  assert.equal(offered(h + '.' + p + '\n.' + s), 'envelope-malformed');
  assert.equal(s.length, 86);
  assert.equal(offered(h + '.' + p + '.' + s + 'AAA'), 'envelope-malformed'); // 89 characters: 1 more than a multiple of 4
  assert.equal(offered(h + '.' + p + '.' + s + 'AA'), 'bad-signature'); // 88: well formed, 66 bytes
  assert.equal(offered('\u00e9' + GOOD), 'envelope-malformed'); // not ASCII
  assert.equal(offered('\ufeff' + GOOD), 'envelope-malformed'); // a byte-order mark is not white space
  assert.equal(offered('\v' + GOOD), 'envelope-malformed'); // nor is a vertical tab
  // Unused low bits: the signature's 86 characters carry 516 bits for 512; the last 4 must be zero.
  const last = s[s.length - 1];
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const withBits = alphabet[alphabet.indexOf(last) | 1];
  assert.equal(offered(h + '.' + p + '.' + s.slice(0, -1) + withBits), 'envelope-malformed');
  // The header and payload segments' lengths 1 more than a multiple of 4.
  const oneMore = (x) => x + 'A'.repeat((5 - (x.length % 4)) % 4);
  assert.equal(oneMore(h).length % 4, 1);
  assert.equal(offered(oneMore(h) + '.' + p + '.' + s), 'envelope-malformed');
  assert.equal(offered(h + '.' + oneMore(p) + '.' + s), 'envelope-malformed');
  // An empty signature segment is well formed (check 6 refuses it).
  assert.equal(offered(h + '.' + p + '.'), 'signature-missing');
});

test('3: the header: UTF-8 JSON, an object of exactly alg, kid and typ, strings', () => {
  const kid = keyId(pub('a'));
  const raw = (text) => offered(make({ header: text }));
  assert.equal(raw('not json'), 'envelope-malformed');
  assert.equal(raw(''), 'envelope-malformed');
  assert.equal(raw('[]'), 'envelope-malformed');
  assert.equal(raw('"ES256"'), 'envelope-malformed');
  assert.equal(raw(`{"alg":"ES256","kid":"${kid}","typ":"sessionpolicy-machine+jws",}`), 'envelope-malformed');
  assert.equal(raw(`{"alg":"ES256","alg":"ES256","kid":"${kid}","typ":"sessionpolicy-machine+jws"}`), 'envelope-malformed');
  assert.equal(raw(`{"alg":"ES256","kid":"${kid}","typ":"sessionpolicy-machine+jws","typ":"x"}`), 'envelope-malformed');
  assert.equal(raw(`{"alg":"ES256","kid":"${kid}"}`), 'envelope-malformed');
  assert.equal(raw(`{"alg":"ES256","kid":"${kid}","typ":"sessionpolicy-machine+jws","jku":"https://example.com"}`), 'envelope-malformed');
  assert.equal(raw(`{"alg":"ES256","kid":"${kid}","typ":"sessionpolicy-machine+jws","jwk":{}}`), 'envelope-malformed');
  assert.equal(raw(`{"alg":"ES256","kid":"${kid}","typ":null}`), 'envelope-malformed');
  assert.equal(raw(`{"alg":256,"kid":"${kid}","typ":"sessionpolicy-machine+jws"}`), 'envelope-malformed');
  assert.equal(raw(`{"alg":"ES256","kid":["${kid}"],"typ":"sessionpolicy-machine+jws"}`), 'envelope-malformed');
  assert.equal(raw(`{"Alg":"ES256","kid":"${kid}","typ":"sessionpolicy-machine+jws"}`), 'envelope-malformed');
  // Not UTF-8: a header with a stray 0xff byte.
  const h = Buffer.concat([Buffer.from(`{"alg":"ES256","kid":"${kid}","typ":"sessionpolicy-machine+jws","x":"`), Buffer.from([0xff]), Buffer.from('"}')]);
  assert.equal(raw(h), 'envelope-malformed');
  // A UTF-8 byte-order mark at the start of the header is skipped, as the machine reader skips it.
  assert.equal(raw(`\ufeff{"alg":"ES256","kid":"${kid}","typ":"sessionpolicy-machine+jws"}`), 'installed');
  assert.equal(raw(`{"alg":"ES256","kid":"${kid}","typ":"sessionpolicy-machine+jws"}\ufeff`), 'envelope-malformed');
  // Members in another order and white space: read, not required canonical (the bytes are signed).
  assert.equal(raw(` { "typ" : "sessionpolicy-machine+jws", "kid": "${kid}", "alg": "ES256" }\n`), 'installed');
});

test('4 and 5: typ, then alg (none, HS256, ES384 refused), before the signature is looked at', () => {
  assert.equal(offered(make({ header: { typ: 'JWT' } })), 'unsupported-envelope');
  assert.equal(offered(make({ header: { typ: 'JWT', alg: 'none' } })), 'unsupported-envelope');
  for (const alg of ['none', 'HS256', 'ES384', 'RS256', 'es256', 'ES256 ', '']) {
    assert.equal(offered(make({ header: { alg } })), 'unsupported-algorithm', alg);
    assert.equal(offered(make({ header: { alg }, signature: '' })), 'unsupported-algorithm', alg);
  }
});

test('6 and 7: an empty signature is signature-missing; a kid not pinned is unpinned-key', () => {
  assert.equal(offered(make({ signature: '' })), 'signature-missing');
  assert.equal(offered(make({ signature: '', kid: 'nobody' })), 'signature-missing');
  assert.equal(offered(make({ key: 'b' })), 'unpinned-key');
  assert.equal(offered(make({ key: 'b' }), { keys: ['a', 'b'] }), 'installed');
  assert.equal(offered(make({ key: 'c' }), { keys: ['a', 'b'] }), 'unpinned-key');
  assert.equal(offered(make({ kid: keyId(pub('a')).toUpperCase() })), 'unpinned-key');
  assert.equal(offered(make({ kid: '' })), 'unpinned-key');
});

test('8: the signature: 64 bytes, r and s in [1, n-1], verifying with the named key over the signed bytes', () => {
  const n = P256_ORDER;
  const set = (at, v) => (sig) => {
    const out = sig.slice();
    out.set(Buffer.from(v.toString(16).padStart(64, '0'), 'hex'), at);
    return out;
  };
  assert.equal(offered(make({ signature: (s) => s.subarray(0, 63) })), 'bad-signature');
  assert.equal(offered(make({ signature: (s) => Uint8Array.from([...s, 0]) })), 'bad-signature');
  assert.equal(offered(make({ signature: set(0, 0n) })), 'bad-signature');
  assert.equal(offered(make({ signature: set(32, 0n) })), 'bad-signature');
  assert.equal(offered(make({ signature: set(0, n) })), 'bad-signature');
  assert.equal(offered(make({ signature: set(32, n) })), 'bad-signature');
  assert.equal(offered(make({ signature: (s) => new Uint8Array(64) })), 'bad-signature');
  for (const bit of [0, 77, 255, 256, 400, 511]) {
    assert.equal(offered(make({ signature: (s) => { const o = s.slice(); o[bit >> 3] ^= 1 << (bit & 7); return o; } })), 'bad-signature', `bit ${bit}`);
  }
  // Signed by b, named a; a's signature over another payload; a DER signature.
  assert.equal(offered(make({ key: 'b', kid: keyId(pub('a')) }), { keys: ['a', 'b'] }), 'bad-signature');
  const [h, , s] = GOOD.split('.');
  const otherPayload = make({ payload: { serial: 1001 } }).split('.')[1];
  assert.equal(offered(`${h}.${otherPayload}.${s}`), 'bad-signature');
  const signed = GOOD.split('.').slice(0, 2).join('.');
  const der = nodeSign('sha256', Buffer.from(signed), priv('a'));
  assert.equal(offered(`${signed}.${b64(der)}`), 'bad-signature');
  // The signature covers the segments as they appear: the same header re-encoded is another envelope.
  const headerSpaced = b64(Buffer.from(h, 'base64url').toString() + ' ');
  assert.equal(offered(`${headerSpaced}.${GOOD.split('.')[1]}.${s}`), 'bad-signature');
  // (r, n - s) verifies as well: ECDSA signatures are malleable, and the envelope does not ask for a low s.
  const malleated = make({ signature: (sig) => set(32, n - BigInt('0x' + Buffer.from(sig.subarray(32)).toString('hex')))(sig) });
  assert.equal(offered(malleated), 'installed');
});

test('9 and 10: the payload: UTF-8 JSON, an object with a string format, this format', () => {
  const raw = (text) => offered(make({ payload: text }));
  const good = canonical(payloadOf());
  assert.equal(raw('not json'), 'envelope-malformed');
  assert.equal(raw('[]'), 'envelope-malformed');
  assert.equal(raw('{}'), 'envelope-malformed');
  assert.equal(raw(good.slice(0, -1)), 'envelope-malformed');
  assert.equal(raw(good.replace('{', '{"policy":"x",')), 'envelope-malformed'); // a key twice
  assert.equal(raw(good.replace(`"format":"${ENVELOPE_FORMAT}"`, '"format":1')), 'envelope-malformed');
  assert.equal(raw(good.replace(`"format":"${ENVELOPE_FORMAT}"`, '"format":null')), 'envelope-malformed');
  assert.equal(raw(good.replace(`"format":"${ENVELOPE_FORMAT}",`, '')), 'envelope-malformed');
  assert.equal(raw(good.replace(ENVELOPE_FORMAT, 'sessionpolicy-envelope/2')), 'unsupported-envelope');
  assert.equal(raw(good.replace(ENVELOPE_FORMAT, 'sessionpolicy-machine/1')), 'unsupported-envelope');
  // An unsupported format wins over every other member's problem.
  assert.equal(raw(`{"format":"sessionpolicy-envelope/2","serial":-1}`), 'unsupported-envelope');
  // Pretty-printed, members in another order: read (the bytes are what is signed).
  assert.equal(raw(JSON.stringify(JSON.parse(good), null, 2)), 'installed');
});

test('3 and 9: the header and payload within the envelope\'s own limits: 4 MiB, 64 values, 8 levels', () => {
  const kid = keyId(pub('a'));
  const result = (envelope) => {
    const r = updater().offer(envelope, NOW);
    return r.result === 'refused' ? `${r.code}: ${r.message}` : r.result;
  };
  // The header: {alg, kid, typ} is 7 values (the object, 3 keys, 3 strings); a member `x`
  // holding a list of n numbers adds n + 2. At 64 values the extra member is the refusal; at 65
  // the count is (too-many-nodes), both at check 3.
  const header = (x) => make({ header: `{"alg":"ES256","kid":"${kid}","typ":"sessionpolicy-machine+jws","x":${x}}` });
  const list = (n) => '[' + Array(n).fill('1').join(',') + ']';
  assert.match(result(header(list(55))), /^envelope-malformed: the header has a member `x`/);
  assert.match(result(header(list(56))), /^envelope-malformed: .*too-many-nodes/);
  // 8 levels: the root is 1, `x` and its value 2; 6 lists deep puts the innermost number at 8.
  const nested = (k) => '['.repeat(k) + '1' + ']'.repeat(k);
  assert.match(result(header(nested(6))), /^envelope-malformed: the header has a member `x`/);
  assert.match(result(header(nested(7))), /^envelope-malformed: .*nesting-too-deep/);
  // A key is counted at its own level: an object 7 deep whose key is at level 9.
  assert.match(result(header('{"a":'.repeat(6) + '1' + '}'.repeat(6))), /^envelope-malformed: the header has a member `x`/);
  assert.match(result(header('{"a":'.repeat(7) + '1' + '}'.repeat(7))), /^envelope-malformed: .*nesting-too-deep/);
  // The payload: {format, x: [n numbers]} is n + 5 values. Within the limits the format is
  // looked at (check 10); past them the payload is not read (check 9).
  const payload = (x) => make({ payload: `{"format":"sessionpolicy-envelope/2","x":${x}}` });
  assert.match(result(payload(list(59))), /^unsupported-envelope/);
  assert.match(result(payload(list(60))), /^envelope-malformed: .*too-many-nodes/);
  assert.match(result(payload(nested(6))), /^unsupported-envelope/);
  assert.match(result(payload(nested(7))), /^envelope-malformed: .*nesting-too-deep/);
  // Bytes: a payload of 1.5 MiB (white space around a machine of 220 KB) is read: the machine
  // document's 1 MiB is the machine's limit, not the payload's.
  const good = canonical(payloadOf());
  const padded = good.slice(0, -1) + ' '.repeat(1.5 * 1024 * 1024) + '}';
  assert.ok(padded.length > 1024 * 1024 && padded.length < 4 * 1024 * 1024);
  assert.equal(result(make({ payload: padded })), 'installed');
  // A payload about as large as 4 MiB of envelope can carry (3 MiB, in base64url) is read too.
  const largest = make({ payload: good.slice(0, -1) + ' '.repeat(3 * 1024 * 1024 - 256 - good.length) + '}' });
  assert.ok(largest.length <= 4 * 1024 * 1024 && largest.length > 4 * 1024 * 1024 - 512, String(largest.length));
  assert.equal(result(largest), 'installed');
  // The machine keeps the machine document's own limits: over 1 MiB it is refused (check 15),
  // and its own values and levels are not the envelope's (every machine has more than 64).
  const doc = DOC.trimEnd();
  assert.equal(doc[doc.length - 1], '}');
  const big = doc.slice(0, -1) + ' '.repeat(1024 * 1024 - doc.length + 1) + '}';
  assert.equal(big.length, 1024 * 1024 + 1);
  assert.match(result(make({ payload: { machine: big } })), /^machine-refused: .*input-too-large/);
  assert.equal(result(make({ payload: { machine: big.slice(0, -2) + '}' } })), 'installed');
});

test('11: exactly the seven members, of their types, within their bounds', () => {
  const p = (over) => offered(make({ payload: over }));
  const good = canonical(payloadOf());
  const raw = (text) => offered(make({ payload: text }));
  assert.equal(p({ extra: 1 }), 'envelope-malformed');
  for (const m of ['policy', 'serial', 'issued_at', 'expires_at', 'digest', 'machine']) {
    assert.equal(p({ [m]: undefined }), 'envelope-malformed', `no ${m}`);
  }
  assert.equal(p({ policy: '' }), 'envelope-malformed');
  assert.equal(p({ policy: 7 }), 'envelope-malformed');
  assert.equal(p({ serial: 0 }), 'envelope-malformed');
  assert.equal(p({ serial: -1 }), 'envelope-malformed');
  assert.equal(p({ serial: 9007199254740991 }), 'installed');
  assert.equal(raw(good.replace('"serial":1000', '"serial":9007199254740992')), 'envelope-malformed');
  assert.equal(raw(good.replace('"serial":1000', '"serial":1000.0')), 'envelope-malformed');
  assert.equal(raw(good.replace('"serial":1000', '"serial":1e3')), 'envelope-malformed');
  assert.equal(raw(good.replace('"serial":1000', '"serial":"1000"')), 'envelope-malformed');
  assert.equal(raw(good.replace('"serial":1000', '"serial":true')), 'envelope-malformed');
  assert.equal(raw(good.replace('"serial":1000', '"serial":null')), 'envelope-malformed');
  assert.equal(raw(good.replace('"serial":1000', '"serial":99999999999999999999999999')), 'envelope-malformed');
  assert.equal(p({ issued_at: -1 }), 'envelope-malformed');
  assert.equal(p({ issued_at: 0, expires_at: 253402300799999 }), 'installed');
  assert.equal(p({ expires_at: 253402300800000 }), 'envelope-malformed');
  assert.equal(raw(good.replace(`"issued_at":${NOW - DAY}`, `"issued_at":${NOW - DAY}.5`)), 'envelope-malformed');
  assert.equal(raw(good.replace(`"issued_at":${NOW - DAY}`, `"issued_at":"2026-02-28T09:00:00Z"`)), 'envelope-malformed');
  assert.equal(p({ expires_at: NOW - DAY }), 'envelope-malformed'); // not later than issued_at
  assert.equal(p({ expires_at: NOW - DAY - 1 }), 'envelope-malformed');
  assert.equal(p({ expires_at: NOW - DAY + 1, issued_at: NOW - DAY }), 'expired'); // well formed; then check 14
  assert.equal(p({ digest: MACHINE.digest.toUpperCase() }), 'envelope-malformed');
  assert.equal(p({ digest: MACHINE.digest.slice(7) }), 'envelope-malformed');
  assert.equal(p({ digest: MACHINE.digest + '0' }), 'envelope-malformed');
  assert.equal(p({ digest: null }), 'envelope-malformed');
  assert.equal(p({ machine: JSON.parse(DOC) }), 'envelope-malformed'); // the document as an object, not its text
  assert.equal(p({ machine: null }), 'envelope-malformed');
  // `-0` is 0 (docs/envelope.md check 11): an issued_at of -0 is the epoch; a serial of -0 is 0.
  assert.equal(raw(good.replace(`"issued_at":${NOW - DAY}`, '"issued_at":-0')), 'installed');
  assert.equal(raw(good.replace('"serial":1000', '"serial":-0')), 'envelope-malformed');
  assert.equal(raw(good.replace('"serial":1000', '"serial":-1000')), 'envelope-malformed');
  // Member problems come before the policy, the times and the machine.
  assert.equal(p({ serial: 0, policy: 'other', machine: 'x' }), 'envelope-malformed');
});

test('12: the policy expected (compared scalar by scalar)', () => {
  assert.equal(offered(make({ payload: { policy: 'spendiq' } })), 'wrong-policy');
  assert.equal(offered(make({ payload: { policy: POLICY.toUpperCase() } })), 'wrong-policy');
  // Before the times and the machine.
  assert.equal(offered(make({ payload: { policy: 'spendiq', expires_at: NOW - 10 * DAY, issued_at: NOW - 20 * DAY, machine: 'x' } })), 'wrong-policy');
});

test('13 and 14: issued at most now + tolerance, expiring at least now - tolerance (boundaries included)', () => {
  const at = (issued, expires) => offered(make({ payload: { issued_at: issued, expires_at: expires } }));
  assert.equal(at(NOW + TOLERANCE, NOW + DAY), 'installed');
  assert.equal(at(NOW + TOLERANCE + 1, NOW + DAY), 'not-yet-valid');
  assert.equal(at(NOW - DAY, NOW - TOLERANCE), 'installed');
  assert.equal(at(NOW - DAY, NOW - TOLERANCE - 1), 'expired');
  // Another tolerance; none at all.
  const strict = new MachineUpdater({ policy: POLICY, keys: [pub('a')], tolerance: 0 });
  assert.equal(strict.tolerance, 0);
  assert.equal(strict.offer(make({ payload: { issued_at: NOW + 1 } }), NOW).code, 'not-yet-valid');
  assert.equal(strict.offer(make({ payload: { issued_at: NOW } }), NOW).result, 'installed');
  assert.equal(updater().tolerance, 600000);
  // The times come before the machine.
  assert.equal(offered(make({ payload: { issued_at: NOW - 2 * DAY, expires_at: NOW - DAY, machine: 'x' } })), 'expired');
});

test('15 and 16: the machine document is accepted, and is the one the payload names', () => {
  const r = updater().offer(make({ payload: { machine: DOC.replace('Salesforce session', 'Salesforce Session') } }), NOW);
  assert.equal(r.code, 'machine-refused');
  assert.match(r.message, /digest-mismatch/);
  assert.match(updater().offer(make({ payload: { machine: '' } }), NOW).message, /empty-document/);
  assert.match(updater().offer(make({ payload: { machine: '{}' } }), NOW).message, /missing-key/);
  assert.equal(offered(make({ payload: { machine: 'not json' } })), 'machine-refused');
  // 16: another digest named; another policy's machine.
  assert.equal(offered(make({ payload: { digest: OTHER.digest } })), 'machine-mismatch');
  assert.equal(offered(make({ payload: { machine: OTHER.text } })), 'machine-mismatch');
  assert.equal(offered(make({ payload: { machine: OTHER.text, digest: OTHER.digest } })), 'installed');
  const spendiq = readFileSync(spec('machines/spendiq.json'), 'utf8');
  const spendiqDigest = PolicyMachine.fromDocument(spendiq).digest;
  assert.equal(offered(make({ payload: { machine: spendiq, digest: spendiqDigest } })), 'machine-mismatch');
  // A pretty-printed document is the same machine (its digest is taken of the canonical text).
  assert.equal(offered(make({ payload: { machine: JSON.stringify(JSON.parse(DOC), null, 1) } })), 'installed');
});

test('17: a larger serial installs, whatever the machine; the machine held with a serial not larger is unchanged; else rollback', () => {
  const other = { machine: OTHER.text, digest: OTHER.digest };
  const u = updater();
  assert.equal(u.offer(GOOD, NOW).result, 'installed'); // serial 1000, MACHINE
  assert.deepEqual(u.offer(GOOD, NOW), { result: 'unchanged' });
  assert.deepEqual(u.offer(make({ payload: { serial: 999 } }), NOW), { result: 'unchanged' });
  assert.deepEqual(u.offer(make({ payload: { serial: 1000 } }), NOW), { result: 'unchanged' }); // signed again, same serial
  assert.equal(u.current.envelope, GOOD);
  assert.equal(u.offer(make({ payload: { serial: 999, ...other } }), NOW).code, 'rollback');
  assert.equal(u.offer(make({ payload: { serial: 1000, ...other } }), NOW).code, 'rollback');
  assert.equal(u.current.serial, 1000);
  const newer = make({ payload: { serial: 1001, ...other } });
  const r = u.offer(newer, NOW);
  assert.equal(r.result, 'installed');
  assert.equal(r.serial, 1001);
  assert.equal(u.current.digest, OTHER.digest);
  assert.equal(u.machine.digest, OTHER.digest);
  // Back to the first machine with a smaller serial: rollback; with a larger one: installed.
  assert.equal(u.offer(GOOD, NOW).code, 'rollback');
  const back = make({ payload: { serial: 1002 } });
  assert.equal(u.offer(back, NOW).result, 'installed');
  assert.equal(u.current.digest, MACHINE.digest);
  // The same machine signed later (a larger serial) installs: the serial held moves up and the
  // envelope held is the later one, so an envelope signed in between cannot come back.
  const between = make({ payload: { serial: 1003, ...other } });
  const later = make({ payload: { serial: 1004 } });
  const again = u.offer(later, NOW);
  assert.equal(again.result, 'installed');
  assert.equal(again.serial, 1004);
  assert.equal(again.digest, MACHINE.digest);
  assert.equal(u.current.serial, 1004);
  assert.equal(u.current.envelope, later);
  assert.equal(u.offer(between, NOW).code, 'rollback'); // would have installed over 1002
  assert.deepEqual(u.offer(back, NOW), { result: 'unchanged' }); // the same machine, an older serial
  assert.equal(u.current.serial, 1004);
  assert.equal(u.offer(newer, NOW).code, 'rollback');
});

test('restore: checks 1-12, 15 and 16, not the times; nothing held, any serial', () => {
  const old = make({ payload: { issued_at: NOW - 400 * DAY, expires_at: NOW - 365 * DAY } });
  assert.equal(offered(old), 'expired');
  const u = updater();
  const r = u.restore(old);
  assert.equal(r.result, 'installed');
  assert.equal(u.current.envelope, old);
  const future = make({ payload: { issued_at: NOW + 365 * DAY, expires_at: NOW + 400 * DAY } });
  assert.equal(updater().restore(future).result, 'installed');
  assert.equal(updater().restore(make({ payload: { serial: 1 } })).result, 'installed');
  // The other checks apply.
  assert.equal(updater().restore(make({ key: 'b' })).code, 'unpinned-key');
  assert.equal(updater().restore(make({ signature: (s) => { const o = s.slice(); o[5] ^= 4; return o; } })).code, 'bad-signature');
  assert.equal(updater().restore(make({ payload: { policy: 'spendiq' } })).code, 'wrong-policy');
  assert.equal(updater().restore(make({ payload: { digest: OTHER.digest } })).code, 'machine-mismatch');
  assert.equal(updater().restore(make({ payload: { machine: 'x' } })).code, 'machine-refused');
  assert.equal(updater().restore(new Uint8Array(4 * 1024 * 1024 + 1)).code, 'envelope-too-large');
  assert.equal(updater().restore('').code, 'envelope-malformed');
  // What was installed and stored restores in a new updater (the next start), then offers go on from it.
  const first = updater();
  const stored = first.offer(make({ payload: { serial: 5000 } }), NOW).envelope;
  const next = updater();
  assert.equal(next.restore(stored).result, 'installed');
  assert.equal(next.current.serial, 5000);
  assert.equal(next.offer(GOOD, NOW).result, 'unchanged'); // serial 1000, same machine
  assert.equal(next.offer(make({ payload: { serial: 4999, machine: OTHER.text, digest: OTHER.digest } }), NOW).code, 'rollback');
});

test('restore over a machine held: check 17 applies (rollback, unchanged, installed), still no times', () => {
  const other = { machine: OTHER.text, digest: OTHER.digest };
  const u = updater();
  assert.equal(u.offer(GOOD, NOW).result, 'installed'); // serial 1000, MACHINE
  const held = u.current;
  // An older serial with another machine: rollback, and the machine held stays.
  const older = make({ payload: { serial: 999, ...other } });
  assert.equal(updater().restore(older).result, 'installed'); // nothing held: any serial
  const r = u.restore(older);
  assert.equal(r.result, 'refused');
  assert.equal(r.code, 'rollback');
  assert.equal(u.current, held);
  assert.equal(u.restore(make({ payload: { serial: 1000, ...other } })).code, 'rollback');
  // The machine held with a serial not larger: unchanged.
  assert.deepEqual(u.restore(make({ payload: { serial: 999 } })), { result: 'unchanged' });
  assert.deepEqual(u.restore(GOOD), { result: 'unchanged' });
  assert.equal(u.current, held);
  // A larger serial installs (the same machine too), expired or not.
  const expired = make({ payload: { serial: 1001, issued_at: NOW - 400 * DAY, expires_at: NOW - 365 * DAY } });
  const installed = u.restore(expired);
  assert.equal(installed.result, 'installed');
  assert.equal(u.current.serial, 1001);
  assert.equal(u.current.digest, MACHINE.digest);
  assert.equal(u.restore(make({ payload: { serial: 1002, ...other } })).result, 'installed');
  assert.equal(u.current.digest, OTHER.digest);
  assert.equal(u.restore(expired).code, 'rollback');
});

test('after every refusal the updater keeps the machine it had', () => {
  const u = updater(['a', 'b']);
  assert.equal(u.offer(GOOD, NOW).result, 'installed');
  const held = u.current;
  const other = { machine: OTHER.text, digest: OTHER.digest, serial: 2000 };
  const refusals = [
    ['envelope-too-large', new Uint8Array(4 * 1024 * 1024 + 1)],
    ['envelope-malformed', 'x.y'],
    ['envelope-malformed', make({ header: '{}' })],
    ['unsupported-envelope', make({ header: { typ: 'JWT' }, payload: other })],
    ['unsupported-algorithm', make({ header: { alg: 'none' }, payload: other, signature: '' })],
    ['signature-missing', make({ payload: other, signature: '' })],
    ['unpinned-key', make({ key: 'c', payload: other })],
    ['bad-signature', make({ key: 'b', kid: keyId(pub('a')), payload: other })],
    ['envelope-malformed', make({ payload: '[]' })],
    ['unsupported-envelope', make({ payload: { ...other, format: 'x' } })],
    ['envelope-malformed', make({ payload: { ...other, serial: 0 } })],
    ['wrong-policy', make({ payload: { ...other, policy: 'spendiq' } })],
    ['not-yet-valid', make({ payload: { ...other, issued_at: NOW + DAY, expires_at: NOW + 2 * DAY } })],
    ['expired', make({ payload: { ...other, issued_at: NOW - 2 * DAY, expires_at: NOW - DAY } })],
    ['machine-refused', make({ payload: { ...other, machine: OTHER.text.replace('another', 'Another') } })],
    ['machine-mismatch', make({ payload: { ...other, digest: MACHINE.digest } })],
    ['rollback', make({ payload: { ...other, serial: 999 } })],
  ];
  for (const [code, envelope] of refusals) {
    const r = u.offer(envelope, NOW);
    assert.equal(r.result, 'refused', code);
    assert.equal(r.code, code);
    assert.equal(typeof r.message, 'string');
    assert.ok(r.message.length > 0);
    assert.equal(u.current, held, `after ${code}`);
    assert.equal(u.machine, held.machine);
    // Restoring a bad envelope keeps it too (check 17 included: a machine is held).
    if (code !== 'not-yet-valid' && code !== 'expired') {
      assert.equal(u.restore(envelope).code, code);
      assert.equal(u.current, held, `after restoring ${code}`);
    }
  }
  // Still installs a good one after all that.
  assert.equal(u.offer(make({ payload: other }), NOW).result, 'installed');
});

test('the updater is built with at least one valid pinned key (invalid-key) and a tolerance of 0 or more (invalid-value)', () => {
  const code = (f) => {
    try {
      f();
    } catch (e) {
      assert.ok(e instanceof SessionPolicyError, String(e));
      return e.code;
    }
    return 'built';
  };
  assert.equal(code(() => new MachineUpdater({ policy: POLICY, keys: [] })), 'invalid-key');
  assert.equal(code(() => new MachineUpdater({ policy: POLICY })), 'invalid-key');
  assert.equal(code(() => new MachineUpdater({ policy: POLICY, keys: pub('a') })), 'invalid-key'); // not a list
  assert.equal(code(() => new MachineUpdater({ policy: POLICY, keys: [pub('a'), 'not a key'] })), 'invalid-key');
  assert.equal(code(() => new MachineUpdater({ policy: POLICY, keys: [readFileSync(spec('keys/a.key.pem'), 'utf8')] })), 'invalid-key');
  assert.equal(code(() => new MachineUpdater({ policy: POLICY, keys: [null] })), 'invalid-key');
  assert.equal(code(() => new MachineUpdater({ policy: POLICY, keys: [pub('a')] })), 'built');
  assert.throws(() => new MachineUpdater({ policy: '', keys: [pub('a')] }), TypeError);
  // The tolerance: 0 or more (invalid-value), checked after the keys.
  assert.equal(code(() => new MachineUpdater({ policy: POLICY, keys: [pub('a')], tolerance: -1 })), 'invalid-value');
  assert.equal(code(() => new MachineUpdater({ policy: POLICY, keys: [pub('a')], tolerance: -600000 })), 'invalid-value');
  assert.equal(code(() => new MachineUpdater({ policy: POLICY, keys: [pub('a')], tolerance: -Infinity })), 'invalid-value');
  assert.equal(code(() => new MachineUpdater({ policy: POLICY, keys: [pub('a')], tolerance: 0 })), 'built');
  assert.equal(code(() => new MachineUpdater({ policy: POLICY, keys: [], tolerance: -1 })), 'invalid-key');
  assert.equal(code(() => new MachineUpdater({ policy: POLICY, keys: ['not a key'], tolerance: -1 })), 'invalid-key');
  assert.throws(() => new MachineUpdater({ policy: POLICY, keys: [pub('a')], tolerance: 1.5 }), TypeError);
  assert.throws(() => new MachineUpdater({ policy: POLICY, keys: [pub('a')], tolerance: '600000' }), TypeError);
  const u = new MachineUpdater({ policy: POLICY, keys: [pub('a'), pub('b')] });
  assert.deepEqual(u.keyIds, [keyId(pub('a')), keyId(pub('b'))]);
  assert.equal(u.policy, POLICY);
});
