// The public API directly: the strict readers, evaluation, explanation, times and durations.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { PolicyMachine, SessionState, Event, Outcome, SessionPolicyError, Timestamp, TimeSpan, STATES, EVENTS, FORMAT } from '../sessionpolicy.mjs';

const load = (name) =>
  PolicyMachine.fromDocument(readFileSync(fileURLToPath(new URL(`../../../spec/conformance/machines/${name}.json`, import.meta.url)), 'utf8'));
const spendiq = load('spendiq');
const marketsharp = load('i360-marketsharp');

const code = (f) => {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof SessionPolicyError, String(e));
    return e.code;
  }
  return 'accepted';
};

const T = (s) => Timestamp.parse(s);

test('the strict state reader refuses as Swift does', () => {
  assert.equal(code(() => SessionState.fromJSON('{"state":"flying"}')), 'invalid-value');
  assert.equal(code(() => SessionState.fromJSON('{"state":"active","trusted":true}')), 'unknown-key');
  assert.equal(code(() => SessionState.fromJSON('{"user":"alice"}')), 'missing-key');
  assert.equal(code(() => SessionState.fromJSON('{"state":"active","highest_time":"yesterday"}')), 'invalid-time');
  assert.equal(code(() => SessionState.fromJSON('{"state":"active","highest_time":"-1d"}')), 'invalid-time');
  assert.equal(code(() => SessionState.fromJSON('{"state":"active","failures":{"biometric":-1}}')), 'invalid-value');
  assert.equal(code(() => SessionState.fromJSON('{"state":"active","failures":{"biometric":1.0}}')), 'wrong-type');
  assert.equal(code(() => SessionState.fromJSON('{"state":"active","failures":{"biometric":"1"}}')), 'wrong-type');
  assert.equal(code(() => SessionState.fromJSON('{"state":"active","failures":{"face":1}}')), 'unknown-key');
  assert.equal(code(() => SessionState.fromJSON('{"state":"active","failures":[]}')), 'wrong-type');
  assert.equal(code(() => SessionState.fromJSON('{"state":"active","read_only":"true"}')), 'wrong-type');
  assert.equal(code(() => SessionState.fromJSON('{"state":"active","user":null}')), 'wrong-type');
  assert.equal(code(() => SessionState.fromJSON('{"state":"active","user":" alice"}')), 'invalid-value');
  assert.equal(code(() => SessionState.fromJSON('{"state":"active","user":""}')), 'invalid-value');
  assert.equal(code(() => SessionState.fromJSON('{"state":"active","state":"active"}')), 'duplicate-key');
  assert.equal(code(() => SessionState.fromJSON('{"state":"active",}')), 'invalid-json');
  assert.equal(code(() => SessionState.fromJSON('')), 'empty-document');
  assert.equal(code(() => SessionState.fromJSON('[]')), 'wrong-type');
  // Unknown keys come first, whatever else is wrong.
  const e = assert.throws(() => SessionState.fromJSON('{"zzz":1,"state":"flying"}'), (e) => {
    assert.deepEqual(e.diagnostics.map((d) => d.code), ['unknown-key', 'invalid-value']);
    assert.equal(e.diagnostics[1].path, 'state');
    assert.equal(e.diagnostics[1].line, 1);
    return true;
  });
  void e;
});

test('the strict state reader accepts the stored shape, objects too', () => {
  const text = '{"auth_mode":"biometric","biometric_locked":false,"device":"phone-1","failures":{"biometric":2,"idp_login":0,"offline_login":1},"highest_time":"2026-03-01T09:00:00.250Z","last_idp_login":"2026-03-01T09:00:00Z","read_only":false,"state":"suspended","user":"alice"}';
  const s = SessionState.fromJSON(text);
  assert.equal(s.toJSONString(), text);
  assert.equal(JSON.stringify(s), text);
  assert.equal(SessionState.fromJSON(JSON.parse(text)).toJSONString(), text);
  assert.equal(SessionState.fromJSON(new TextEncoder().encode(text)).toJSONString(), text);
  assert.equal(s.failures.biometric, 2);
  assert.equal(s.highestTime, Date.UTC(2026, 2, 1, 9, 0, 0, 250));
  // Counts past 2^53 are kept exactly.
  const big = SessionState.fromJSON('{"state":"active","failures":{"biometric":9223372036854775807}}');
  assert.equal(big.failures.biometric, 9223372036854775807n);
  assert.match(big.toJSONString(), /"biometric":9223372036854775807,/);
  assert.equal(code(() => SessionState.fromJSON('{"state":"active","failures":{"biometric":9223372036854775808}}')), 'wrong-type');
});

test('the strict event reader refuses as Swift does', () => {
  const t = '"time":"2026-03-01T09:00:00Z"';
  assert.equal(code(() => Event.fromJSON(`{"type":"launch",${t}}`)), 'missing-key');
  assert.equal(code(() => Event.fromJSON(`{"type":"idp_login_succeeded",${t},"user":"a"}`)), 'missing-key');
  assert.equal(code(() => Event.fromJSON(`{"type":"refresh_failed",${t}}`)), 'missing-key');
  assert.equal(code(() => Event.fromJSON(`{"type":"launch","network":"online"}`)), 'missing-key');
  assert.equal(code(() => Event.fromJSON(`{"type":"fly",${t}}`)), 'invalid-value');
  assert.equal(code(() => Event.fromJSON(`{"type":"launch",${t},"network":"maybe"}`)), 'invalid-value');
  assert.equal(code(() => Event.fromJSON(`{"type":"launch",${t},"network":"online","colour":"red"}`)), 'unknown-key');
  assert.equal(code(() => Event.fromJSON(`{"type":"launch",${t},"network":"online","device":{"id":"d","tpm":true}}`)), 'unknown-key');
  assert.equal(code(() => Event.fromJSON(`{"type":"logout",${t},"unsynced_items":-2}`)), 'invalid-value');
  assert.equal(code(() => Event.fromJSON(`{"type":"logout",${t},"attributes":["a"]}`)), 'wrong-type');
  assert.equal(code(() => Event.fromJSON(`{"type":"logout",${t},"attributes":{"a":null}}`)), 'wrong-type');
  assert.equal(code(() => Event.fromJSON('{"type":"logout","time":"2026-02-30T00:00:00Z"}')), 'invalid-time');
  // A number or boolean is not a name (refused, as in Swift); an attribute's value is read as
  // its text.
  assert.equal(code(() => Event.fromJSON(`{"type":"logout",${t},"user":42}`)), 'wrong-type');
  assert.equal(code(() => Event.fromJSON(`{"type":"logout",${t},"app_id":false}`)), 'wrong-type');
  const e = Event.fromJSON(`{"type":"logout",${t},"user":"42","attributes":{"n":5}}`);
  assert.equal(e.user, '42');
  assert.equal(e.attributes.n, '5');
});

test('times are read and written as Timestamp.swift does', () => {
  assert.equal(T('2026-03-01T09:30:00Z'), Date.UTC(2026, 2, 1, 9, 30));
  assert.equal(T('2026-03-01'), Date.UTC(2026, 2, 1));
  assert.equal(T('2026-03-01t09:30:00z'), Date.UTC(2026, 2, 1, 9, 30));
  assert.equal(T('2026-03-01 09:30:00Z'), Date.UTC(2026, 2, 1, 9, 30));
  assert.equal(T('2026-03-01T11:30:00+02:00'), Date.UTC(2026, 2, 1, 9, 30));
  assert.equal(T('2026-03-01T09:30:00.1239Z'), Date.UTC(2026, 2, 1, 9, 30, 0, 123));
  assert.equal(T('2026-03-01T09:30:00.5-00:30'), Date.UTC(2026, 2, 1, 10, 0, 0, 500));
  for (const bad of ['2026-03-01T09:30:00', '2026-03-01T24:00:00Z', '2026-02-29T00:00:00Z', '0000-01-01T00:00:00Z',
    '2026-03-01T09:30:00.Z', '2026-03-01T09:30Z', '2026-3-01', ' 2026-03-01', '2026-03-01T09:30:60Z', '+2026-03-01', '2026-03-01T09:30:00+0200']) {
    assert.equal(T(bad), null, bad);
  }
  assert.equal(T('2024-02-29T00:00:00Z'), Date.UTC(2024, 1, 29));
  assert.equal(T('0001-01-01T00:00:00Z'), Timestamp.earliest);
  assert.equal(T('9999-12-31T23:59:59.999Z'), Timestamp.latest);
  assert.equal(T('9999-12-31T23:59:59.999-00:01'), null);
  assert.equal(Timestamp.format(Date.UTC(2026, 2, 1, 9, 30)), '2026-03-01T09:30:00Z');
  assert.equal(Timestamp.format(Date.UTC(2026, 2, 1, 9, 30, 0, 5)), '2026-03-01T09:30:00.005Z');
  assert.equal(Timestamp.format(Timestamp.earliest), '0001-01-01T00:00:00Z');
  assert.equal(Timestamp.format(Timestamp.latest), '9999-12-31T23:59:59.999Z');
  assert.equal(Timestamp.format(-1), '1969-12-31T23:59:59.999Z');
  for (let ms = -5e12; ms < 5e12; ms += 7777777777) assert.equal(Timestamp.format(ms), new Date(ms).toISOString().replace('.000Z', 'Z'));
});

test('durations are read and written as TimeSpan.swift does', () => {
  assert.equal(TimeSpan.parse('7d'), 604800);
  assert.equal(TimeSpan.parse('1d12h'), 129600);
  assert.equal(TimeSpan.parse('2w'), 1209600);
  for (const bad of ['', '7', '-1d', '1.5d', '7x', 'd', '7dd', '1d 2h', '36600d1s']) assert.equal(TimeSpan.parse(bad), null, bad);
  assert.equal(TimeSpan.parse('36600d'), TimeSpan.maximum);
  assert.equal(TimeSpan.format(0), '0s');
  assert.equal(TimeSpan.format(129600), '1d12h');
  assert.equal(TimeSpan.format(1209600), '14d');
  assert.equal(TimeSpan.format(3661), '1h1m1s');
});

const device = { id: 'phone-1', keystore: 'hardware', integrity: 'ok' };
const now = T('2026-03-01T09:00:00Z');
const resting = (authMode) =>
  new SessionState({ state: 'suspended', user: 'alice', device: 'phone-1', authMode, lastIdPLogin: now - 86400e3, lastOnline: now - 43200e3, lastActivity: now - 3600e3, highestTime: now - 3600e3 });
const launch = new Event({ kind: 'launch', time: now, network: 'offline', user: 'alice', device });

test('evaluate is pure and decides as the policy says', () => {
  const state = resting('biometric');
  const before = state.toJSONString();
  const o = spendiq.evaluate(state, launch);
  assert.ok(o instanceof Outcome);
  assert.equal(state.toJSONString(), before, 'the input state is not changed');
  assert.equal(o.decision, 'require_biometric');
  assert.equal(o.reason, 'within_limits');
  assert.equal(o.state.state, 'awaiting_biometric');
  assert.equal(o.state.highestTime, now);
  assert.equal(o.scope, 'bio_auth_offline');
  assert.deepEqual([...o.notices], []);
  assert.equal(o.transition >= 0, true);
  assert.equal(JSON.stringify(o), o.toJSONString());
  // The same from plain objects.
  assert.equal(spendiq.evaluate({ ...state, failures: { ...state.failures } }, { ...launch }).toJSONString(), o.toJSONString());
  // Then the prompt succeeds.
  const ok = spendiq.evaluate(o.state, new Event({ kind: 'biometric_succeeded', time: now + 5000, device }));
  assert.equal(ok.decision, 'allow');
  assert.equal(ok.reason, 'biometric_verified');
  assert.equal(ok.state.state, 'active');
});

test('fail closed: an incomplete event is idp_login, never allow', () => {
  const state = resting('none');
  assert.equal(spendiq.evaluate(state, launch).decision, 'allow');
  const noNetwork = new Event({ kind: 'launch', time: now, user: 'alice', device });
  const o = spendiq.evaluate(state, noNetwork);
  assert.equal(o.decision, 'idp_login');
  assert.equal(o.reason, 'invalid_event');
  assert.equal(o.message, 'the event is incomplete: `launch` needs `network`');
  assert.equal(o.transition, -1);
  assert.equal(o.state.state, 'awaiting_idp');
  assert.equal(o.authMode, 'none');
  // An attribute the policy does not declare, or a value outside its type.
  const attr = new Event({ kind: 'launch', time: now, network: 'online', user: 'alice', device, attributes: { shoe_size: '44' } });
  assert.equal(spendiq.evaluate(state, attr).reason, 'invalid_event');
  const wrong = new Event({ kind: 'launch', time: now, network: 'online', user: 'alice', device, attributes: { license: 'stolen' } });
  assert.equal(marketsharp.evaluate(state, wrong).reason, 'invalid_event');
  assert.match(marketsharp.evaluate(state, wrong).message, /cannot be `stolen`: it is one of `assigned`, `none`, `revoked`/);
  // A state or event the constructors cannot make is refused, not defaulted.
  assert.throws(() => new SessionState({ state: 'flying' }), SessionPolicyError);
  assert.throws(() => new SessionState({ lastOnline: 'yesterday' }), SessionPolicyError);
  assert.throws(() => new SessionState({ failures: { biometric: -1 } }), SessionPolicyError);
  assert.throws(() => new Event({ kind: 'launch' }), SessionPolicyError);
  assert.throws(() => new Event({ kind: 'fly', time: now }), SessionPolicyError);
  assert.throws(() => new Event({ kind: 'launch', time: now, device: { keystore: 'tpm' } }), SessionPolicyError);
  // A state changed behind the runtime's back is refused when evaluated.
  const tampered = resting('none');
  tampered.state = 'flying';
  assert.throws(() => spendiq.evaluate(tampered, launch), SessionPolicyError);
});

test('session limits, clock rollback and a different user', () => {
  const expired = new SessionState({ state: 'suspended', user: 'alice', device: 'phone-1', authMode: 'biometric', lastIdPLogin: now - 400 * 86400e3, lastOnline: now - 400 * 86400e3, lastActivity: now - 400 * 86400e3, highestTime: now - 400 * 86400e3 });
  const o = spendiq.evaluate(expired, launch);
  assert.ok(['idp_login', 'wipe'].includes(o.decision));
  assert.ok(o.notices.includes('network_required'), 'offline, an idp_login or wipe needs the network');
  const other = spendiq.evaluate(resting('none'), new Event({ kind: 'launch', time: now, network: 'online', user: 'mallory', device }));
  assert.equal(other.reason, 'different_user');
  assert.equal(other.state.state, 'signed_out');
  assert.equal(other.state.user, null);
  assert.equal(other.state.highestTime, now, 'a wipe keeps the highest time seen');
  // The same user written in another Unicode normal form is another user: names are compared
  // scalar by scalar (docs/machine-format.md, "String equality").
  const s = resting('none');
  s.user = 'Zoe\u0301';
  const same = spendiq.evaluate(s, new Event({ kind: 'launch', time: now, network: 'offline', user: 'Zoe\u0301', device }));
  assert.equal(same.reason, 'within_limits');
  const nfc = spendiq.evaluate(s, new Event({ kind: 'launch', time: now, network: 'offline', user: 'Zo\u00e9', device }));
  assert.equal(nfc.reason, 'different_user');
  const back = spendiq.evaluate(resting('none'), new Event({ kind: 'launch', time: now - 30 * 86400e3, network: 'offline', user: 'alice', device }));
  assert.equal(back.reason, 'clock_rollback');
});

test('explain lists the guards tried, in order, ending with the one that decided', () => {
  const { outcome, steps } = spendiq.explain(resting('none'), launch);
  assert.equal(outcome.toJSONString(), spendiq.evaluate(resting('none'), launch).toJSONString());
  assert.ok(steps.length > 3);
  assert.equal(steps[0].check, 'the device failed its integrity check');
  assert.equal(steps[0].facts, 'integrity `ok`');
  assert.equal(steps.at(-1).matched, true);
  assert.equal(steps.at(-1).transition, outcome.transition);
  assert.ok(steps.slice(0, -1).every((s) => !s.matched));
  const incomplete = spendiq.explain(resting('none'), new Event({ kind: 'launch', time: now, device }));
  assert.deepEqual(incomplete.steps.map((s) => s.transition), [-1]);
});

test('vocabulary', () => {
  assert.equal(FORMAT, 'sessionpolicy-machine/1');
  assert.equal(STATES.length, 6);
  assert.equal(EVENTS.length, 17);
  assert.equal(SessionState.signedOut.state, 'signed_out');
});
