// ECDSA P-256 / SHA-256 verification (p256.mjs): known answers (RFC 6979 A.2.5, NIST's
// example, signatures made with `openssl dgst -sha256 -sign`), node:crypto on many keys and
// messages, and what must not verify.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateKeyPairSync, createPrivateKey, createPublicKey, sign as nodeSign, verify as nodeVerify, randomBytes } from 'node:crypto';
import { verifyP256, p256KeyFromSPKI, derFromPEM, isOnP256, P256_ORDER } from '../src/p256.mjs';
import { sha256, keyId, SessionPolicyError } from '../sessionpolicy.mjs';

const keys = fileURLToPath(new URL('../../../spec/conformance/keys/', import.meta.url));
const pem = (name) => readFileSync(join(keys, name), 'utf8');
const hex = (h) => Uint8Array.from(h.match(/../g) || [], (x) => parseInt(x, 16));
const big = (b) => BigInt('0x' + Buffer.from(b).toString('hex'));
const bytes32 = (v) => hex(v.toString(16).padStart(64, '0'));
const keyOfPEM = (text) => p256KeyFromSPKI(derFromPEM(text));

/** A DER ECDSA signature (SEQUENCE { INTEGER r, INTEGER s }) as r || s, 64 bytes. */
function derToRaw(der) {
  assert.equal(der[0], 0x30);
  let i = 2;
  const out = new Uint8Array(64);
  for (let part = 0; part < 2; part++) {
    assert.equal(der[i], 0x02);
    const len = der[i + 1];
    let v = der.subarray(i + 2, i + 2 + len);
    while (v.length > 32 && v[0] === 0) v = v.subarray(1);
    out.set(v, part * 32 + 32 - v.length);
    i += 2 + len;
  }
  return out;
}

// RFC 6979 A.2.5: the P-256 key and its SHA-256 signatures of "sample" and "test".
const rfcKey = {
  x: 0x60fed4ba255a9d31c961eb74c6356d68c049b8923b61fa6ce669622e60f29fb6n,
  y: 0x7903fe1008b8bc99a41ae9e95628bc64f2f1b20c2d7e9f5177a3c294d4462299n,
};
const rfcSample = hex(
  'efd48b2aacb6a8fd1140dd9cd45e81d69d2c877b56aaf991c34d0ea84eaf3716' + 'f7cb1c942d657c41d436c7a1b6e29f65f3e900dbb9aff4064dc4ab2f843acda8',
);
const rfcTest = hex(
  'f1abb023518351cd71d881567b1ea663ed3efcf6c5132b354f28d3b0b7d38367' + '019f4113742a2b14bd25926b49c649155f267e60d3814b4c0cc84250e46f0083',
);

test('RFC 6979 A.2.5: "sample" and "test" verify with the RFC key, and not crossed', () => {
  assert.ok(isOnP256(rfcKey.x, rfcKey.y));
  assert.equal(verifyP256(rfcKey, sha256('sample'), rfcSample), true);
  assert.equal(verifyP256(rfcKey, sha256('test'), rfcTest), true);
  assert.equal(verifyP256(rfcKey, sha256('test'), rfcSample), false);
  assert.equal(verifyP256(rfcKey, sha256('sample'), rfcTest), false);
});

test("NIST's ECDSA P-256 SHA-256 example (\"Example of ECDSA with P-256\")", () => {
  const h = sha256('Example of ECDSA with P-256');
  assert.equal(Buffer.from(h).toString('hex'), 'a41a41a12a799548211c410c65d8133afde34d28bdd542e4b680cf2899c8a8c4');
  const q = {
    x: 0xb7e08afdfe94bad3f1dc8c734798ba1c62b3a0ad1e9ea2a38201cd0889bc7a19n,
    y: 0x3603f747959dbf7a4bb226e41928729063adc7ae43529e61b563bbc606cc5e09n,
  };
  const sig = hex('2b42f576d07f4165ff65d1f3b1500f81e44c316f1f0b3ef57325b69aca46104f' + 'dc42c2122d6392cd3e3a993a89502a8198c1886fe69d262c4b329bdb6b63faf1');
  assert.equal(verifyP256(q, h, sig), true);
  const flipped = h.slice();
  flipped[31] ^= 1;
  assert.equal(verifyP256(q, flipped, sig), false);
});

// Made once with `printf '%s' MESSAGE | openssl dgst -sha256 -sign spec/conformance/keys/a.key.pem` (DER).
const opensslSignatures = [
  ['sessionpolicy', '3045022100ab9ac43d3a2db1b923ee7a61c493e9ba01bb79b0abd310e072e2016e6a03815502202577168fec2835be5350dcd7ae9f52c6c080ba491cdf2df3c59ded40e88e883e'],
  ['The quick brown fox jumps over the lazy dog', '3045022100d03328649c11ea6063b4b1aceedfe7eec82a72aa441a0bcb0efc8734b353ba3f02207c2439fa59d680db36cca02e7f6befb28a9604861934bac93b2c9e9b91e1136c'],
  ['', '30450221009bca7f74e89187a3583ba2740e7e8147c554b2d9734eb73ed970ce400abfdb5602204e9356529f5d8e74d9f7d152bc71d1781523aae6f20bfca7225bfd04b1a82f99'],
];

test('signatures made by openssl dgst -sha256 -sign with key a verify; not with key b', () => {
  const a = keyOfPEM(pem('a.pub.pem'));
  const b = keyOfPEM(pem('b.pub.pem'));
  for (const [message, der] of opensslSignatures) {
    const raw = derToRaw(hex(der));
    assert.equal(verifyP256(a, sha256(message), raw), true, message);
    assert.equal(verifyP256(b, sha256(message), raw), false, message);
    assert.equal(verifyP256(a, sha256(message + '.'), raw), false, message);
  }
});

test('openssl, run now (when installed): fresh signatures with a, b and c verify', (t) => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
  } catch {
    t.skip('openssl not installed');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'p256-'));
  try {
    for (const name of ['a', 'b', 'c']) {
      for (let i = 0; i < 3; i++) {
        const message = randomBytes(i * 37);
        writeFileSync(join(dir, 'msg'), message);
        const der = execFileSync('openssl', ['dgst', '-sha256', '-sign', join(keys, `${name}.key.pem`), join(dir, 'msg')]);
        const key = keyOfPEM(pem(`${name}.pub.pem`));
        assert.equal(verifyP256(key, sha256(message), derToRaw(der)), true, `${name} ${i}`);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('node:crypto: 200 signatures over 20 fresh keys verify, and agree with node:crypto on tampering', () => {
  for (let k = 0; k < 20; k++) {
    const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const der = new Uint8Array(publicKey.export({ type: 'spki', format: 'der' }));
    const key = p256KeyFromSPKI(der);
    for (let i = 0; i < 10; i++) {
      const message = randomBytes((k * 10 + i) % 97);
      const sig = new Uint8Array(nodeSign('sha256', message, { key: privateKey, dsaEncoding: 'ieee-p1363' }));
      assert.equal(verifyP256(key, sha256(message), sig), true);
      const bad = sig.slice();
      bad[(i * 7) % 64] ^= 1 << (i % 8);
      const nodeSays = nodeVerify('sha256', message, { key: publicKey, dsaEncoding: 'ieee-p1363' }, bad);
      assert.equal(verifyP256(key, sha256(message), bad), nodeSays);
      assert.equal(nodeSays, false);
    }
  }
});

test('the test keys a, b, c sign with node:crypto and verify here', () => {
  for (const name of ['a', 'b', 'c']) {
    const priv = createPrivateKey(pem(`${name}.key.pem`));
    const key = keyOfPEM(pem(`${name}.pub.pem`));
    const spki = new Uint8Array(createPublicKey(priv).export({ type: 'spki', format: 'der' }));
    assert.deepEqual(p256KeyFromSPKI(spki), key);
    const message = `signed by ${name}`;
    const sig = new Uint8Array(nodeSign('sha256', Buffer.from(message), { key: priv, dsaEncoding: 'ieee-p1363' }));
    assert.equal(verifyP256(key, sha256(message), sig), true);
    // The same signature in DER, converted.
    const der = new Uint8Array(nodeSign('sha256', Buffer.from(message), priv));
    assert.equal(verifyP256(key, sha256(message), derToRaw(der)), true);
  }
});

test('what must not verify: a flipped bit, r or s out of range, the wrong key, a point off the curve', () => {
  const h = sha256('sample');
  const n = P256_ORDER;
  const r = big(rfcSample.subarray(0, 32));
  const s = big(rfcSample.subarray(32));
  const sig = (rv, sv) => {
    const out = new Uint8Array(64);
    out.set(bytes32(rv), 0);
    out.set(bytes32(sv), 32);
    return out;
  };
  assert.equal(verifyP256(rfcKey, h, sig(r, s)), true);
  for (let bit = 0; bit < 512; bit += 7) {
    const bad = rfcSample.slice();
    bad[bit >> 3] ^= 1 << (bit & 7);
    assert.equal(verifyP256(rfcKey, h, bad), false, `signature bit ${bit}`);
  }
  for (let bit = 0; bit < 256; bit += 5) {
    const bad = h.slice();
    bad[bit >> 3] ^= 1 << (bit & 7);
    assert.equal(verifyP256(rfcKey, bad, rfcSample), false, `digest bit ${bit}`);
  }
  assert.equal(verifyP256(rfcKey, h, sig(0n, s)), false, 'r = 0');
  assert.equal(verifyP256(rfcKey, h, sig(r, 0n)), false, 's = 0');
  assert.equal(verifyP256(rfcKey, h, sig(n, s)), false, 'r = n');
  assert.equal(verifyP256(rfcKey, h, sig(r, n)), false, 's = n');
  assert.equal(verifyP256(rfcKey, h, sig(r + n, s)), false, 'r + n (fits in 32 bytes)');
  assert.equal(verifyP256(rfcKey, h, sig(r, s + n < 2n ** 256n ? s + n : s - 1n)), false, 's + n');
  // ECDSA is malleable: (r, n - s) verifies too (as with node:crypto; the envelope does not ask for a low s).
  assert.equal(verifyP256(rfcKey, h, sig(r, n - s)), true, '(r, n - s)');
  assert.equal(verifyP256(rfcKey, h, rfcSample.subarray(0, 63)), false, '63 bytes');
  assert.equal(verifyP256(rfcKey, h, new Uint8Array(64)), false, 'all zero');
  assert.equal(verifyP256(keyOfPEM(pem('a.pub.pem')), h, rfcSample), false, 'the wrong key');
  assert.equal(verifyP256({ x: rfcKey.x, y: rfcKey.y + 1n }, h, rfcSample), false, 'a point off the curve');
  assert.equal(verifyP256({ x: 0n, y: 0n }, h, rfcSample), false, '(0, 0): not a point');
  const p = 0xffffffff00000001000000000000000000000000ffffffffffffffffffffffffn;
  assert.equal(isOnP256(rfcKey.x + p, rfcKey.y), false, 'x + p: not reduced');
});

test('public keys: the SPKI of P-256 only, the point uncompressed and on the curve', () => {
  const invalid = (text) => {
    try {
      keyId(text);
    } catch (e) {
      assert.ok(e instanceof SessionPolicyError, String(e));
      return e.code;
    }
    return 'accepted';
  };
  const a = pem('a.pub.pem');
  assert.equal(invalid(a), 'accepted');
  assert.equal(invalid('\r\n  ' + a.replace(/\n/g, '\r\n') + '\n\n'), 'accepted');
  assert.equal(invalid(a.replace(/\n(?!-)/g, '')), 'accepted'); // the base64 on one line
  // The key id is the SHA-256 of the 91 bytes of DER (`openssl pkey -pubin -outform DER | sha256sum`).
  const der = new Uint8Array(createPublicKey(a).export({ type: 'spki', format: 'der' }));
  assert.equal(der.length, 91);
  assert.equal(keyId(a), Buffer.from(sha256(der)).toString('hex'));
  const toPEM = (d) => `-----BEGIN PUBLIC KEY-----\n${Buffer.from(d).toString('base64')}\n-----END PUBLIC KEY-----\n`;
  assert.equal(invalid(toPEM(der)), 'accepted');
  // Another curve, RSA, Ed25519, a private key, a compressed point, a point off the curve, not PEM.
  const other = (type, options) => generateKeyPairSync(type, options).publicKey.export({ type: 'spki', format: 'pem' });
  assert.equal(invalid(other('ec', { namedCurve: 'P-384' })), 'invalid-key');
  assert.equal(invalid(other('ec', { namedCurve: 'secp256k1' })), 'invalid-key');
  assert.equal(invalid(other('rsa', { modulusLength: 1024 })), 'invalid-key');
  assert.equal(invalid(other('ed25519', {})), 'invalid-key');
  assert.equal(invalid(pem('a.key.pem')), 'invalid-key');
  const x = der.subarray(27, 59);
  const odd = der[90] & 1;
  const comp = Uint8Array.from([0x30, 0x39, ...der.subarray(2, 23), 0x03, 0x22, 0x00, 0x02 + odd, ...x]);
  assert.equal(createPublicKey({ key: Buffer.from(comp), format: 'der', type: 'spki' }).asymmetricKeyType, 'ec'); // node reads it
  assert.equal(invalid(toPEM(comp)), 'invalid-key');
  const off = der.slice();
  off[90] ^= 1;
  assert.equal(invalid(toPEM(off)), 'invalid-key');
  const hybrid = der.slice();
  hybrid[26] = 0x06 + odd;
  assert.equal(invalid(toPEM(hybrid)), 'invalid-key');
  assert.equal(invalid(toPEM(der.subarray(0, 90))), 'invalid-key');
  assert.equal(invalid(toPEM(Uint8Array.from([...der, 0]))), 'invalid-key');
  assert.equal(invalid(Buffer.from(der).toString('base64')), 'invalid-key'); // base64 without the PEM lines
  assert.equal(invalid(a.replace('PUBLIC KEY', 'CERTIFICATE')), 'invalid-key');
  // Read strictly (docs/envelope.md, "Keys"): exactly one block, nothing but white space around
  // it; white space inside the base64 is ignored; the base64 canonical (padding, unused bits zero).
  assert.equal(invalid(a.replace(/\n(?!-)/g, '\u00a0\t\n  ')), 'accepted');
  assert.equal(invalid('\u3000\n\t ' + a + '\r\n\u00a0'), 'accepted');
  assert.equal(keyId(' \n' + a + '\n\n'), keyId(a));
  assert.equal(invalid('Key a, test only\n' + a), 'invalid-key'); // text before
  assert.equal(invalid(a + 'the end\n'), 'invalid-key'); // text after
  assert.equal(invalid(a + '#'), 'invalid-key');
  assert.equal(invalid('\ufeff' + a), 'invalid-key'); // a byte-order mark is not white space
  assert.equal(invalid(a + a), 'invalid-key'); // two blocks, the same key twice
  assert.equal(invalid(a + pem('b.pub.pem')), 'invalid-key');
  assert.equal(invalid(a.replace('-----END PUBLIC KEY-----', '-----END PUBLIC KEY----- ')), 'accepted');
  assert.equal(invalid(a.replace('-----END PUBLIC KEY-----', '-----END PUBLIC KEY-----x')), 'invalid-key');
  assert.equal(invalid(a.replace('-----BEGIN PUBLIC KEY-----', '-----BEGIN PUBLIC KEY-----\nProc-Type: 4,ENCRYPTED\n')), 'invalid-key'); // headers
  const body = Buffer.from(der).toString('base64'); // 91 bytes: 124 characters, the last two '='
  assert.equal(body.length === 124 && body.endsWith('==') && !body.endsWith('==='), true);
  const block = (b) => `-----BEGIN PUBLIC KEY-----\n${b}\n-----END PUBLIC KEY-----\n`;
  assert.equal(invalid(block(body)), 'accepted');
  assert.equal(invalid(block(body.replace(/(.{64})/g, '$1\r\n'))), 'accepted');
  assert.equal(invalid(block(body.slice(0, -2))), 'invalid-key'); // no padding
  assert.equal(invalid(block(body.slice(0, -1))), 'invalid-key'); // half the padding
  assert.equal(invalid(block(body + '=')), 'invalid-key'); // too much padding
  assert.equal(invalid(block(body.slice(0, -2) + ' = \n= ')), 'accepted'); // white space around the padding is white space
  assert.equal(invalid(block(body.slice(0, 60) + '=' + body.slice(60))), 'invalid-key'); // padding inside
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const last = body[body.length - 3]; // 1 byte in the last group: 8 bits in 12, the last 4 unused
  assert.equal(alphabet.indexOf(last) & 15, 0);
  assert.equal(invalid(block(body.slice(0, -3) + alphabet[alphabet.indexOf(last) | 1] + '==')), 'invalid-key'); // unused bits
  assert.equal(invalid(block(body.slice(0, -3) + alphabet[alphabet.indexOf(last) | 8] + '==')), 'invalid-key');
  assert.equal(invalid(block(body.replace(/\+/g, '-').replace(/\//g, '_'))), body.match(/[+/]/) ? 'invalid-key' : 'accepted'); // base64url
  assert.equal(invalid(block('')), 'invalid-key');
  assert.equal(invalid('-----BEGIN PUBLIC KEY----------END PUBLIC KEY-----'), 'invalid-key');
  assert.equal(invalid(a.replace('-----END', '-----FIN')), 'invalid-key');
  assert.equal(invalid(a.replace('-----END PUBLIC KEY-----', '')), 'invalid-key');
  assert.equal(invalid(a.replace(/=/, '')), 'invalid-key'); // padding removed
  assert.equal(invalid(a.replace('MFkw', 'MF!w')), 'invalid-key');
  assert.equal(invalid(''), 'invalid-key');
  assert.equal(invalid(null), 'invalid-key');
});
