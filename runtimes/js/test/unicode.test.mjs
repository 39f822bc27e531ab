// Names are compared scalar by scalar (docs/machine-format.md, "String equality"): no Unicode
// normalization, so no answer depends on the Unicode version of the engine's ICU. The
// conformance vectors show the answers; these tests show the reproducer of issue 32 and that
// the runtime's source calls nothing whose answer is the engine's Unicode tables.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { PolicyMachine, SessionState, Event, SessionPolicyError } from '../sessionpolicy.mjs';

const source = readFileSync(fileURLToPath(new URL('../sessionpolicy.mjs', import.meta.url)), 'utf8');
const spendiq = PolicyMachine.fromDocument(
  readFileSync(fileURLToPath(new URL('../../../spec/conformance/machines/spendiq.json', import.meta.url)), 'utf8'));

const state = (user) =>
  `{"auth_mode":"none","biometric_locked":false,"device":"phone-1","failures":{"biometric":0,"idp_login":0,"offline_login":0},` +
  `"highest_time":"2026-03-01T09:00:00Z","last_activity":"2026-03-01T09:00:00Z","last_idp_login":"2026-03-01T09:00:00Z",` +
  `"last_online":"2026-03-01T09:00:00Z","read_only":false,"state":"suspended","user":"${user}"}`;
const launch = (user, more = '') =>
  `{"type":"launch","time":"2026-03-01T10:00:00Z","network":"online","user":"${user}","device":{"id":"phone-1"}${more}}`;

test('the runtime reads no Unicode table of the engine: no normalize, no locale, no \\p{...}', () => {
  for (const banned of ['.normalize(', 'localeCompare', 'Intl.', 'toLocaleUpperCase', 'toLocaleLowerCase', '\\p{', '\\P{']) {
    assert.ok(!source.includes(banned), `sessionpolicy.mjs uses \`${banned}\``);
  }
});

test('issue 32: U+1AC1 (Unicode 14) and a cedilla in another order are another user', () => {
  const s = SessionState.fromJSON(state('e\\u0327\\u1ac1'));
  assert.equal(spendiq.evaluate(s, Event.fromJSON(launch('e\\u0327\\u1ac1'))).decision, 'allow');
  const other = spendiq.evaluate(s, Event.fromJSON(launch('e\\u1ac1\\u0327')));
  assert.equal(other.decision, 'wipe');
  assert.equal(other.reason, 'different_user');
});

test('two spellings of one key are two keys; one spelling twice is a duplicate', () => {
  const e = Event.fromJSON(launch('alice', ',"attributes":{"\\u00e9":"1","e\\u0301":"2"}'));
  assert.equal(Object.keys(e.attributes).length, 2);
  assert.throws(
    () => Event.fromJSON(launch('alice', ',"attributes":{"\\u00e9":"1","\u00e9":"2"}')),
    (err) => err instanceof SessionPolicyError && err.diagnostics[0].code === 'duplicate-key');
});
