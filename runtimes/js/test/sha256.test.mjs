// SHA-256 against the FIPS 180-4 examples, and against node:crypto on many lengths.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { sha256Hex, sha256 } from '../sessionpolicy.mjs';

test('FIPS 180-4: "abc"', () => {
  assert.equal(sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
});

test('FIPS 180-4: the empty message', () => {
  assert.equal(sha256Hex(''), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
});

test('FIPS 180-4: the 448-bit message', () => {
  assert.equal(
    sha256Hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq'),
    '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
  );
});

test('FIPS 180-4: the 896-bit message', () => {
  assert.equal(
    sha256Hex('abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu'),
    'cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1',
  );
});

test('FIPS 180-4: one million times "a"', () => {
  assert.equal(sha256Hex('a'.repeat(1_000_000)), 'cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0');
});

test('every length around the block boundaries, bytes and text, as node:crypto', () => {
  for (let n = 0; n < 300; n++) {
    const bytes = new Uint8Array(n).map((_, i) => (i * 131 + n) & 0xff);
    assert.equal(sha256Hex(bytes), createHash('sha256').update(bytes).digest('hex'), `length ${n}`);
  }
  const text = 'Zürich ✓ 𝄞 '.repeat(40);
  assert.equal(sha256Hex(text), createHash('sha256').update(text, 'utf8').digest('hex'));
  assert.equal(sha256(text).length, 32);
});
