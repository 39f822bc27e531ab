// The runtime's names against spec/vocabulary.json, in both directions: a name this runtime
// knows that the file lacks, or one the file has that this runtime lacks, fails with both lists.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as v from '../src/vocabulary.mjs';
import { ATTRIBUTE_TYPES, CONDITION_OPS, DOCUMENT_CODES, FACTS, G } from '../src/document.mjs';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const vocabulary = JSON.parse(readFileSync(here('../../../spec/vocabulary.json'), 'utf8'));

/** This runtime's names of each set of the file (`reasons` are checked apart: see below). */
const runtime = {
  attribute_types: ATTRIBUTE_TYPES,
  auth_modes: v.AUTH_MODES,
  comparisons: v.COMPARISONS,
  condition_ops: CONDITION_OPS,
  decisions: v.DECISIONS,
  document_codes: DOCUMENT_CODES,
  effects: v.EFFECTS,
  events: v.EVENTS,
  facts: FACTS,
  failure_paths: v.FAILURE_PATHS,
  guards: Object.keys(G),
  integrities: v.INTEGRITIES,
  keystores: v.KEYSTORES,
  networks: v.NETWORKS,
  notices: v.NOTICES.map(([name]) => name),
  refresh_causes: v.CAUSES,
  scopes: v.SCOPES,
  states: v.STATES,
  switches: v.SWITCHES,
};

/** The differences between a runtime's names and the file's set, as sentences. */
export function differences(set, names, file) {
  const problems = [];
  const lacking = names.filter((n) => !file.includes(n));
  const missing = file.filter((n) => !names.includes(n));
  if (lacking.length) problems.push(`${set}: the JavaScript runtime knows ${lacking.map((n) => '`' + n + '`').join(', ')}, which spec/vocabulary.json lacks`);
  if (missing.length) problems.push(`${set}: spec/vocabulary.json has ${missing.map((n) => '`' + n + '`').join(', ')}, which the JavaScript runtime lacks`);
  if (new Set(names).size !== names.length) problems.push(`${set}: the JavaScript runtime lists a name twice`);
  return problems;
}

test('spec/vocabulary.json: every set is a sorted list of distinct names', () => {
  for (const [set, names] of Object.entries(vocabulary)) {
    if (set.startsWith('$')) continue;
    assert.ok(Array.isArray(names) && names.length > 0, `${set} is not a non-empty list`);
    assert.deepEqual(names, [...new Set(names)].sort(), `${set} is not sorted, or holds a name twice`);
  }
});

test("the runtime's names are spec/vocabulary.json's, in both directions", () => {
  const sets = Object.keys(vocabulary).filter((k) => !k.startsWith('$') && k !== 'reasons');
  assert.deepEqual(Object.keys(runtime).sort(), sets.sort(), 'the sets the test holds are not the sets of spec/vocabulary.json');
  const problems = sets.flatMap((set) => differences(set, [...runtime[set]], vocabulary[set]));
  assert.deepEqual(problems, []);
});

test('the difference is reported both ways', () => {
  assert.deepEqual(differences('notices', ['a', 'b'], ['b', 'c']), [
    'notices: the JavaScript runtime knows `a`, which spec/vocabulary.json lacks',
    'notices: spec/vocabulary.json has `c`, which the JavaScript runtime lacks',
  ]);
});

test('every code the machine reader writes is one of its document codes', () => {
  // The JSON reader's and the document reader's code literals (every kebab-case string in them).
  const written = new Set();
  for (const file of ['../src/json.mjs', '../src/document.mjs']) {
    for (const m of readFileSync(here(file), 'utf8').matchAll(/'([a-z0-9]+(?:-[a-z0-9]+)+)'/g)) written.add(m[1]);
  }
  assert.deepEqual([...written].filter((c) => !DOCUMENT_CODES.includes(c)), []);
});

test("reasons: those the runtime writes, and the shipped machines' built-in ones, are in the vocabulary", () => {
  // The runtime has no list of reasons: a machine's transitions carry theirs. It writes two of
  // its own (an incomplete event, an event no transition takes).
  const own = ['invalid_event', 'unexpected_event'];
  const source = readFileSync(here('../src/machine.mjs'), 'utf8');
  const written = [...source.matchAll(/out\.reason = '([a-z_]+)'/g)].map((m) => m[1]);
  assert.deepEqual(written.sort(), own);
  const machines = here('../../../spec/conformance/machines/');
  const used = new Set(own);
  for (const f of readdirSync(machines)) {
    // A rule's transitions (guard `rule`, or `switched` to a new login a rule decides) give the
    // reason the policy's rule names; every other reason is built in.
    for (const t of JSON.parse(readFileSync(machines + f, 'utf8')).transitions) {
      const g = t.guard.kind === 'switched' ? t.guard.inner : t.guard;
      if (g.kind !== 'rule') used.add(t.action.reason);
    }
  }
  assert.deepEqual([...used].filter((r) => !vocabulary.reasons.includes(r)).sort(), []);
});
