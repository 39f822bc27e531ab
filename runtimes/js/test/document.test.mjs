// Reading machine documents: what is accepted, and every kind of refusal with its code.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { PolicyMachine, SessionPolicyError, sha256Hex } from '../sessionpolicy.mjs';

const machines = new URL('../../../spec/conformance/machines/', import.meta.url);
const text = (name) => readFileSync(fileURLToPath(new URL(name + '.json', machines)), 'utf8');
const spendiq = text('spendiq');
const marketsharp = text('i360-marketsharp');

/** Canonical text (sorted keys, no whitespace): JSON.stringify escapes as RFC 8785 does. */
function canonical(v) {
  if (Array.isArray(v)) return '[' + v.map(canonical).join(',') + ']';
  if (v !== null && typeof v === 'object') {
    return '{' + Object.keys(v).sort().map((k) => JSON.stringify(k) + ':' + canonical(v[k])).join(',') + '}';
  }
  return JSON.stringify(v);
}

/** The document `text` changed by `change`, with a digest that matches again. */
function resigned(source, change) {
  const doc = JSON.parse(source);
  change(doc);
  delete doc.digest;
  doc.digest = 'sha256:' + sha256Hex(canonical(doc));
  return canonical(doc);
}

function refusal(document) {
  try {
    PolicyMachine.fromDocument(document);
  } catch (e) {
    assert.ok(e instanceof SessionPolicyError, `not a SessionPolicyError: ${e}`);
    assert.ok(e instanceof Error);
    assert.ok(e.diagnostics.length >= 1);
    assert.equal(e.diagnostics[0].severity, 'error');
    assert.equal(typeof e.diagnostics[0].message, 'string');
    return e.code;
  }
  return 'accepted';
}

test('a shipped document loads; its properties and digest are the document\'s', () => {
  const m = PolicyMachine.fromDocument(spendiq);
  const doc = JSON.parse(spendiq);
  assert.equal(m.name, 'spendiq');
  assert.equal(m.description, doc.description);
  assert.equal(m.digest, doc.digest);
  assert.equal(m.revealsDetectionRefusal, false);
  assert.equal(m.transitionCount, doc.transitions.length);
  assert.equal(m.document, spendiq.trimEnd(), 'written back, the document is the canonical text received');
  assert.deepEqual(m.transition(0), doc.transitions[0]);
  assert.equal(m.transition(99999), null);
});

test('the same document as bytes, pretty-printed or with a byte-order mark loads with the same digest', () => {
  const digest = JSON.parse(spendiq).digest;
  assert.equal(PolicyMachine.fromDocument(new TextEncoder().encode(spendiq)).digest, digest);
  assert.equal(PolicyMachine.fromDocument(JSON.stringify(JSON.parse(spendiq), null, 2)).digest, digest);
  assert.equal(PolicyMachine.fromDocument('\uFEFF' + spendiq).digest, digest);
});

test('a changed byte: digest-mismatch', () => {
  const tampered = spendiq.replace('"message":"this device failed its integrity check"', '"message":"this device failed its integrity checks"');
  assert.notEqual(tampered, spendiq);
  assert.equal(refusal(tampered), 'digest-mismatch');
  const limit = spendiq.replace(/"limit_seconds":(\d+)/, (_, n) => `"limit_seconds":${Number(n) + 1}`);
  assert.equal(refusal(limit), 'digest-mismatch');
  const digest = spendiq.replace(/"digest":"sha256:[0-9a-f]/, '"digest":"sha256:x');
  assert.equal(refusal(digest), 'digest-mismatch');
});

test('another format: unsupported-format, checked before anything else', () => {
  assert.equal(refusal(spendiq.replace('"format":"sessionpolicy-machine/1"', '"format":"sessionpolicy-machine/2"')), 'unsupported-format');
  assert.equal(refusal('{"format":"sessionpolicy-machine/2","whatever":[1.5]}'), 'unsupported-format');
  assert.equal(refusal('{"format":1}'), 'wrong-type');
  assert.equal(refusal('{"name":"x"}'), 'missing-key');
});

test('not a machine document at all', () => {
  assert.equal(refusal(''), 'empty-document');
  assert.equal(refusal('  \n'), 'empty-document');
  assert.equal(refusal('{"format":'), 'invalid-json');
  assert.equal(refusal(spendiq.slice(0, 5000)), 'invalid-json');
  assert.equal(refusal(spendiq + ','), 'invalid-json');
  assert.equal(refusal('[]'), 'wrong-type');
  assert.equal(refusal('{"format":"sessionpolicy-machine/1","format":"sessionpolicy-machine/1"}'), 'duplicate-key');
  assert.equal(refusal(new Uint8Array([0xff, 0xfe, 0x7b, 0x00])), 'unsupported-encoding');
  assert.equal(refusal(new Uint8Array([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x3a, 0x31, 0x7d])), 'invalid-utf8');
  assert.equal(refusal('{"format":"\uD800"}'), 'invalid-utf8');
  assert.equal(refusal('x'.repeat((1 << 20) + 1)), 'input-too-large');
  assert.equal(refusal('['.repeat(65) + ']'.repeat(65)), 'nesting-too-deep');
  assert.throws(() => PolicyMachine.fromDocument(42), SessionPolicyError);
  assert.throws(() => new PolicyMachine(), TypeError);
});

test('a member missing, or one this format does not have: missing-key, unknown-key', () => {
  assert.equal(refusal(resigned(spendiq, (d) => delete d.levers)), 'missing-key');
  assert.equal(refusal(resigned(spendiq, (d) => delete d.transitions[3].action.notice_delay_seconds)), 'missing-key');
  assert.equal(refusal(resigned(spendiq, (d) => (d.signature = 'x'))), 'unknown-key');
  assert.equal(refusal(resigned(spendiq, (d) => (d.transitions[0].guard.tolerance_seconds = 5))), 'unknown-key');
  assert.equal(refusal(resigned(spendiq, (d) => (d.transitions[0].action.priority = 1))), 'unknown-key');
});

test('a value of the wrong type or an unknown name: wrong-type, invalid-value', () => {
  assert.equal(refusal(resigned(spendiq, (d) => (d.name = 7))), 'wrong-type');
  assert.equal(refusal(resigned(spendiq, (d) => (d.reveal_refusal = 'no'))), 'wrong-type');
  assert.equal(refusal(resigned(spendiq, (d) => (d.transitions[0].levers = 'x'))), 'wrong-type');
  assert.equal(refusal(resigned(spendiq, (d) => (d.transitions[0].action.target = 'flying'))), 'invalid-value');
  assert.equal(refusal(resigned(spendiq, (d) => (d.transitions[0].from = 'flying'))), 'invalid-value');
  assert.equal(refusal(resigned(spendiq, (d) => (d.transitions[0].guard = { kind: 'moon_phase' }))), 'invalid-value');
  assert.equal(refusal(resigned(spendiq, (d) => (d.transitions[0].action.effects = ['teleport']))), 'invalid-value');
  assert.equal(refusal(resigned(spendiq, (d) => (d.transitions[0].action.decision = 'maybe'))), 'invalid-value');
  assert.equal(refusal(resigned(spendiq, (d) => (d.scopes.none = 'everything'))), 'invalid-value');
  const i = JSON.parse(spendiq).transitions.findIndex((t) => t.guard.kind === 'session_max_exceeded' || t.guard.kind === 'idle_exceeded');
  assert.equal(refusal(resigned(spendiq, (d) => (d.transitions[i].guard.limit_seconds = -1))), 'invalid-value');
  // A machine document holds integers only.
  assert.equal(refusal(resigned(spendiq, (d) => (d.transitions[i].guard.limit_seconds = 1.5))), 'invalid-value');
});

test('a machine this runtime cannot run as written: inconsistent-machine', () => {
  const doc = JSON.parse(spendiq);
  assert.equal(refusal(resigned(spendiq, (d) => d.states.reverse())), 'inconsistent-machine');
  assert.equal(refusal(resigned(spendiq, (d) => d.events.pop())), 'inconsistent-machine');
  assert.equal(refusal(resigned(spendiq, (d) => (d.transitions[5].id = 6))), 'inconsistent-machine');
  // The first transition of another group moved to the front (ids renumbered): out of order.
  const other = doc.transitions.findIndex((t) => t.event !== doc.transitions[0].event || t.from !== doc.transitions[0].from);
  assert.equal(
    refusal(resigned(spendiq, (d) => {
      const [t] = d.transitions.splice(other, 1);
      d.transitions.unshift(t);
      d.transitions.forEach((x, k) => (x.id = k));
    })),
    'inconsistent-machine',
  );
  // A group whose last guard is not `always`: some event would fall through.
  const last = doc.transitions.findIndex((t, k) => t.guard.kind === 'always' && k > 0);
  assert.equal(refusal(resigned(spendiq, (d) => (d.transitions[last].guard = { kind: 'network_offline' }))), 'inconsistent-machine');
  // A group with no transitions at all.
  assert.equal(
    refusal(resigned(spendiq, (d) => {
      d.transitions = d.transitions.filter((t) => !(t.from === 'signed_out' && t.event === 'logout'));
      d.transitions.forEach((x, k) => (x.id = k));
    })),
    'inconsistent-machine',
  );
  // Written back it would differ: effects out of their order, a notice twice, a lever without a place.
  const two = doc.transitions.findIndex((t) => t.action.effects.length >= 2);
  assert.equal(refusal(resigned(spendiq, (d) => d.transitions[two].action.effects.reverse())), 'inconsistent-machine');
  assert.equal(refusal(resigned(spendiq, (d) => d.transitions[two].action.effects.push(d.transitions[two].action.effects[0]))), 'inconsistent-machine');
  assert.equal(refusal(resigned(spendiq, (d) => (d.levers[Object.keys(d.levers)[0]] = null))), 'inconsistent-machine');
  // A switched guard holding another.
  const switched = doc.transitions.findIndex((t) => t.guard.kind === 'switched');
  assert.equal(
    refusal(resigned(spendiq, (d) => (d.transitions[switched].guard.inner = { ...d.transitions[switched].guard }))),
    'inconsistent-machine',
  );
});

test('rules and attributes that do not exist: inconsistent-machine', () => {
  const doc = JSON.parse(marketsharp);
  assert.ok(PolicyMachine.fromDocument(marketsharp));
  const r = doc.transitions.findIndex((t) => t.guard.kind === 'rule');
  assert.equal(refusal(resigned(marketsharp, (d) => (d.transitions[r].guard.rule = 99))), 'inconsistent-machine');
  assert.equal(refusal(resigned(marketsharp, (d) => (d.transitions[r].guard.rule = -1))), 'inconsistent-machine');
  assert.equal(refusal(resigned(marketsharp, (d) => (d.rules[0].condition.attribute = 'shoe_size'))), 'inconsistent-machine');
  assert.equal(refusal(resigned(marketsharp, (d) => (d.rules[0].condition.op = 'maybe'))), 'invalid-value');
  assert.equal(refusal(resigned(marketsharp, (d) => (d.attributes[0].type.kind = 'color'))), 'invalid-value');
});
