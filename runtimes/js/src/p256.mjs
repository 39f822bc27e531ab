// ECDSA verification on P-256 (FIPS 186-5, SEC 1 §4.1.4), in pure JavaScript with BigInt: the
// signature check of the signed machine (docs/envelope.md, `ES256`). No WebCrypto, no platform
// imports, synchronous: it runs where `sessionpolicy.mjs` runs (Node, browsers, Hermes).
//
// Verification only: it handles no secret, so it makes no attempt at constant time. The caller
// hashes (SHA-256) and passes the 32-byte digest.

/** The field prime p = 2^256 - 2^224 + 2^192 + 2^96 - 1. */
const P = 0xffffffff00000001000000000000000000000000ffffffffffffffffffffffffn;
/** The order n of the base point (the curve's cofactor is 1). */
export const P256_ORDER = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const N = P256_ORDER;
/** b of y^2 = x^3 - 3x + b. */
const B = 0x5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604bn;
const GX = 0x6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296n;
const GY = 0x4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5n;

/**
 * The DER a P-256 SubjectPublicKeyInfo starts with (RFC 5480): SEQUENCE { SEQUENCE {
 * id-ecPublicKey, prime256v1 }, BIT STRING (66 bytes, no unused bits) }; then the point,
 * 0x04 || X || Y. 26 + 65 = 91 bytes in all.
 */
const SPKI_PREFIX = [
  0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d,
  0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
];
export const P256_SPKI_LENGTH = 91;

function mod(a, m) {
  const r = a % m;
  return r < 0n ? r + m : r;
}

/** a^-1 mod m (m prime, a not a multiple of m), by the extended Euclidean algorithm. */
function inverse(a, m) {
  let r0 = m;
  let r1 = mod(a, m);
  let t0 = 0n;
  let t1 = 1n;
  while (r1 !== 0n) {
    const q = r0 / r1;
    [r0, r1] = [r1, r0 - q * r1];
    [t0, t1] = [t1, t0 - q * t1];
  }
  if (r0 !== 1n) throw new RangeError('not invertible');
  return mod(t0, m);
}

function bigFromBytes(b, start, end) {
  let v = 0n;
  for (let i = start; i < end; i++) v = (v << 8n) | BigInt(b[i]);
  return v;
}

/** Whether (x, y) is a point of the curve: both coordinates in [0, p) and y^2 = x^3 - 3x + b. */
export function isOnP256(x, y) {
  if (typeof x !== 'bigint' || typeof y !== 'bigint') return false;
  if (x < 0n || x >= P || y < 0n || y >= P) return false;
  return mod(y * y - (x * x * x - 3n * x + B), P) === 0n;
}

// Points in Jacobian coordinates [X, Y, Z] (x = X/Z^2, y = Y/Z^3); Z = 0 is the point at infinity.

const INFINITY = [1n, 1n, 0n];

/** 2P (dbl-2001-b, for a = -3). */
function double([X1, Y1, Z1]) {
  if (Z1 === 0n || Y1 === 0n) return INFINITY;
  const delta = (Z1 * Z1) % P;
  const gamma = (Y1 * Y1) % P;
  const beta = (X1 * gamma) % P;
  const alpha = (3n * mod(X1 - delta, P) * (X1 + delta)) % P;
  const X3 = mod(alpha * alpha - 8n * beta, P);
  const Z3 = mod((Y1 + Z1) * (Y1 + Z1) - gamma - delta, P);
  const Y3 = mod(alpha * (4n * beta - X3) - 8n * ((gamma * gamma) % P), P);
  return [X3, Y3, Z3];
}

/** P1 + P2 where P2 is affine [x2, y2] (or null for infinity): mixed addition. */
function addAffine(p1, p2) {
  if (p2 === null) return p1;
  const [X1, Y1, Z1] = p1;
  const [x2, y2] = p2;
  if (Z1 === 0n) return [x2, y2, 1n];
  const Z1Z1 = (Z1 * Z1) % P;
  const U2 = (x2 * Z1Z1) % P;
  const S2 = (((y2 * Z1) % P) * Z1Z1) % P;
  const H = mod(U2 - X1, P);
  const R = mod(S2 - Y1, P);
  if (H === 0n) return R === 0n ? double(p1) : INFINITY;
  const HH = (H * H) % P;
  const HHH = (H * HH) % P;
  const V = (X1 * HH) % P;
  const X3 = mod(R * R - HHH - 2n * V, P);
  const Y3 = mod(R * (V - X3) - Y1 * HHH, P);
  const Z3 = (Z1 * H) % P;
  return [X3, Y3, Z3];
}

/** The affine [x, y] of a Jacobian point, or null for infinity. */
function toAffine([X, Y, Z]) {
  if (Z === 0n) return null;
  const zi = inverse(Z, P);
  const zi2 = (zi * zi) % P;
  return [(X * zi2) % P, (((Y * zi2) % P) * zi) % P];
}

/** u1*G + u2*Q, by Shamir's trick (one pass over the bits of both scalars). */
function twoMultiply(u1, u2, qx, qy) {
  const g = [GX, GY];
  const q = [qx, qy];
  const gq = toAffine(addAffine([GX, GY, 1n], q));
  const table = [null, g, q, gq];
  let acc = INFINITY;
  const bits = Math.max(u1.toString(2).length, u2.toString(2).length);
  for (let i = bits - 1; i >= 0; i--) {
    acc = double(acc);
    const k = BigInt(i);
    const index = Number((u1 >> k) & 1n) | (Number((u2 >> k) & 1n) << 1);
    if (index !== 0) {
      const t = table[index];
      acc = t === null ? acc : addAffine(acc, t);
    }
  }
  return acc;
}

/**
 * Whether `signature` (64 bytes: r then s, each 32 bytes big-endian, RFC 7518 §3.4) is a valid
 * ECDSA signature of the 32-byte `digest` under the public key (x, y). False for anything that
 * is not: r or s outside [1, n-1], a point not on the curve, a result at infinity.
 */
export function verifyP256(key, digest, signature) {
  if (!key || !isOnP256(key.x, key.y)) return false;
  if (!(digest instanceof Uint8Array) || digest.length !== 32) return false;
  if (!(signature instanceof Uint8Array) || signature.length !== 64) return false;
  const r = bigFromBytes(signature, 0, 32);
  const s = bigFromBytes(signature, 32, 64);
  if (r < 1n || r >= N || s < 1n || s >= N) return false;
  const e = bigFromBytes(digest, 0, 32); // the bit length of n is 256: the whole digest
  const w = inverse(s, N);
  const u1 = (e * w) % N;
  const u2 = (r * w) % N;
  const point = toAffine(twoMultiply(u1, u2, key.x, key.y));
  if (point === null) return false;
  return point[0] % N === r;
}

/**
 * The public key of a P-256 SubjectPublicKeyInfo in DER, exactly 91 bytes: `{x, y}`. Throws an
 * `Error` saying what is wrong: another length, another algorithm or curve, a compressed or
 * hybrid point, a point not on the curve.
 */
export function p256KeyFromSPKI(der) {
  if (!(der instanceof Uint8Array)) throw new Error('the key is not bytes');
  if (der.length !== P256_SPKI_LENGTH || der[0] !== 0x30) {
    throw new Error(`the key is not a P-256 public key (SubjectPublicKeyInfo of ${P256_SPKI_LENGTH} bytes, the point uncompressed)`);
  }
  for (let i = 0; i < SPKI_PREFIX.length; i++) {
    if (der[i] !== SPKI_PREFIX[i]) {
      throw new Error('the key is not an ECDSA P-256 public key with an uncompressed point (another algorithm, curve or encoding)');
    }
  }
  if (der[26] !== 0x04) throw new Error('the key\'s point is not uncompressed (0x04 || X || Y)');
  const x = bigFromBytes(der, 27, 59);
  const y = bigFromBytes(der, 59, 91);
  if (!isOnP256(x, y)) throw new Error('the key\'s point is not on the P-256 curve');
  return { x, y };
}

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const BASE64_VALUE = new Int16Array(128).fill(-1);
for (let i = 0; i < 64; i++) BASE64_VALUE[BASE64.charCodeAt(i)] = i;

/** Unicode white space (U+0009-U+000D, U+0020, U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000). */
function isWhiteSpace(c) {
  return (
    (c >= 0x09 && c <= 0x0d) || c === 0x20 || c === 0x85 || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000
  );
}

/**
 * The DER of a PEM `PUBLIC KEY`, read strictly (docs/envelope.md, "Keys"): the text is exactly
 * one block, `-----BEGIN PUBLIC KEY-----` to `-----END PUBLIC KEY-----`, with nothing but white
 * space before and after it; between the two lines white space is ignored and the rest must be
 * the one base64 text (RFC 4648 §4) of the DER: `=` padding as its length needs, and the unused
 * low bits of its last character zero. Throws an `Error` saying what is wrong (not one block,
 * text around it, a private key, not base64).
 */
export function derFromPEM(pem) {
  if (typeof pem !== 'string') throw new Error('the key is not a string');
  const begin = '-----BEGIN PUBLIC KEY-----';
  const end = '-----END PUBLIC KEY-----';
  let from = 0;
  let to = pem.length;
  while (from < to && isWhiteSpace(pem.charCodeAt(from))) from++;
  while (to > from && isWhiteSpace(pem.charCodeAt(to - 1))) to--;
  if (to - from < begin.length + end.length || !pem.startsWith(begin, from) || !pem.endsWith(end, to)) {
    if (/-----BEGIN (EC |ENCRYPTED )?PRIVATE KEY-----/.test(pem)) {
      throw new Error('this is a private key; an app pins the public key, and never holds the private one');
    }
    if (pem.includes(begin) && pem.includes(end)) {
      throw new Error('the key has text around its PEM block: the PEM text is one block with nothing but white space before and after it');
    }
    throw new Error('the key is not a PEM public key (-----BEGIN PUBLIC KEY----- ... -----END PUBLIC KEY-----)');
  }
  const body = pem.slice(from + begin.length, to - end.length);
  if (body.includes('-----')) throw new Error('the key holds more than one PEM block: the PEM text is exactly one');
  const values = [];
  let padding = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body.charCodeAt(i);
    if (isWhiteSpace(c)) continue;
    if (c === 0x3d) {
      padding += 1;
      continue;
    }
    const v = c < 128 ? BASE64_VALUE[c] : -1;
    if (v < 0 || padding > 0) throw new Error('the PEM block is not base64');
    values.push(v);
  }
  const rest = values.length % 4;
  if (rest === 1 || padding !== (4 - rest) % 4) {
    throw new Error('the PEM block is not base64 (its length or padding is wrong)');
  }
  const out = new Uint8Array(Math.floor((values.length * 3) / 4));
  let n = 0;
  let acc = 0;
  let bits = 0;
  for (const v of values) {
    acc = ((acc << 6) | v) & 0xfff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[n++] = (acc >> bits) & 0xff;
    }
  }
  if ((acc & ((1 << bits) - 1)) !== 0) throw new Error('the PEM block is not base64 (stray bits at its end)');
  return out;
}
