#!/usr/bin/env node
// Writes generated-documents.jsonl: machine documents derived from the shipped machines
// (machines/*.json) by systematic mutations, which every runtime must load or refuse exactly as
// the Swift engine does. No dependencies.
//
//   node spec/conformance/generate-documents.mjs           # writes the mutations, without results
//   RECORD_SNAPSHOTS=1 swift test --disable-xctest --filter GeneratedDocumentTests
//                                                          # the Swift engine writes each result
//   node spec/conformance/generate-documents.mjs --check   # exit 1 if the file is not this script's
//
// A line is `{"id", "machine", "digest", "ops", then "refuse" or "accept"}`: take
// `machines/<machine>.json`, apply `ops` in order (RFC 6902 `add`, `remove`, `replace`, `copy`
// with RFC 6901 JSON pointers; the value is JSON without fractions), then, when `digest` is
// `fix` and the document is still an object with a `digest` member, set `digest` to the digest
// of the document without it (`sha256:` and the hex SHA-256 of its canonical text); write the
// document canonically and load it. It must be refused with the code of `refuse` (the first
// diagnostic) or accepted with the digest of `accept`. The results are the Swift engine's
// (Tests/SessionPolicyTests/GeneratedDocumentTests.swift): this script writes none, and keeps
// none when it rewrites the file, so record again after changing it.

import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const here = dirname(fileURLToPath(import.meta.url));
const OUTPUT = join(here, 'generated-documents.jsonl');
const vocabulary = JSON.parse(readFileSync(join(here, '..', 'vocabulary.json'), 'utf8'));

/**
 * Every mutation at every shape of every machine would be tens of thousands of documents of
 * 150 to 210 KB, each read in full (the digest), and the Swift engine's debug build reads one in
 * about 0.2 to 0.9 s: this machine (every guard, condition, fact and attribute type) gets every
 * shape, the others the shapes of the members below.
 */
const FULL = ['every-rule'];
/** The members whose shapes the other machines get. */
const SHALLOW = /^\/(format|digest|states|scopes)(\/|$)/;

/** The values of another type a value is replaced with, by its type. */
const WRONG_TYPES = {
  null: [['"x"', 'x']],
  boolean: [['1', 1]],
  number: [['"1"', '1']],
  string: [['null', null]],
  array: [['{}', {}]],
  object: [['[]', []]],
};
/** Integers at the edges: negative, zero, past the longest duration, past a failure limit. */
const NUMBERS = [-1, 3162240001, 2147483648];

const typeOf = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'object' ? 'object' : typeof v);
const escape = (t) => String(t).replace(/~/g, '~0').replace(/\//g, '~1');
const pointer = (tokens) => tokens.map((t) => '/' + escape(t)).join('');

/** The closed set (a list of names) the string at `tokens` is read from, or null. */
function closedSet(tokens, parent) {
  const last = tokens[tokens.length - 1];
  const up = tokens[tokens.length - 2];
  const inGuard = tokens.includes('guard');
  const inCondition = tokens.includes('condition');
  if (tokens.length === 2 && (tokens[0] === 'states' || tokens[0] === 'events')) return vocabulary[tokens[0]];
  if (tokens[0] === 'transitions' && tokens.length === 3 && last === 'from') return vocabulary.states;
  if (tokens[0] === 'transitions' && tokens.length === 3 && last === 'event') return vocabulary.events;
  if (tokens[0] === 'rules' && up === 'on') return vocabulary.events;
  if (tokens[0] === 'scopes' && tokens.length === 2) return vocabulary.scopes;
  if (tokens.includes('action')) {
    if (last === 'decision') return vocabulary.decisions;
    if (last === 'target') return [...vocabulary.states, 'resting', 'unchanged'];
    if (up === 'effects') return vocabulary.effects;
    if (up === 'notices') return vocabulary.notices;
  }
  if (inGuard && last === 'kind') return vocabulary.guards;
  if (inGuard && (last === 'mode' || up === 'modes')) return vocabulary.auth_modes;
  if (inGuard && last === 'path') return vocabulary.failure_paths;
  if (inGuard && last === 'cause') return vocabulary.refresh_causes;
  if (inGuard && last === 'switch') return vocabulary.switches;
  if (inCondition && last === 'op') return vocabulary.condition_ops;
  if (inCondition && last === 'fact') return vocabulary.facts;
  if (inCondition && last === 'comparison') return vocabulary.comparisons;
  if (tokens[0] === 'attributes' && up === 'type' && last === 'kind' && parent !== null) return vocabulary.attribute_types;
  return null;
}

/** The mutations of the value `v` at `tokens` (its parent `parent`): `[name, ops]`. */
function mutationsAt(v, tokens, parent) {
  const p = pointer(tokens);
  const out = [];
  const replace = (name, value) => out.push([name, [{ op: 'replace', path: p, value }]]);
  if (tokens.length > 0 && typeOf(parent) === 'object') out.push(['removed', [{ op: 'remove', path: p }]]);
  for (const [name, value] of WRONG_TYPES[typeOf(v)]) replace(`replaced with ${name}`, value);
  switch (typeOf(v)) {
    case 'object':
      out.push(['an unknown member', [{ op: 'add', path: p + '/unknown_member', value: 1 }]]);
      break;
    case 'array':
      if (v.length > 0) {
        replace('emptied', []);
        out.push(['its first item twice', [{ op: 'copy', from: p + '/0', path: p + '/-' }]]);
        out.push(['its first item removed', [{ op: 'remove', path: p + '/0' }]]);
        if (v.length > 1 && JSON.stringify([...v].reverse()) !== JSON.stringify(v)) {
          out.push(['its first two items swapped', [{ op: 'copy', from: p + '/0', path: p + '/2' }, { op: 'remove', path: p + '/0' }]]);
        }
      } else {
        out.push(['an item added', [{ op: 'add', path: p + '/-', value: 'x' }]]);
      }
      break;
    case 'number':
      for (const n of new Set([...NUMBERS, v + 1])) if (n !== v && Number.isSafeInteger(n)) replace(`replaced with ${n}`, n);
      break;
    case 'string': {
      const set = closedSet(tokens, parent);
      if (set !== null) {
        replace('an unknown name', 'no_such_name');
        const others = set.filter((w) => w !== v);
        if (others.length > 0) replace(`another name (\`${others[others.length - 1]}\`)`, others[others.length - 1]);
      } else {
        replace('replaced with ""', '');
      }
      break;
    }
    case 'boolean':
      replace(`replaced with ${!v}`, !v);
      break;
  }
  return out;
}

/**
 * The shape of a position: indices as `*`, an object's `kind` or `op`, and a condition's or
 * guard's place by its own kind and member only (a condition in an `and` in a `not` is a
 * condition; a switched guard's inner guard is a guard).
 */
function shapeOf(tokens, v) {
  let s = tokens.map((t) => (typeof t === 'number' ? '*' : t)).join('/');
  s = s.replace(/condition(\/(left|right|operand))+/, 'condition').replace(/guard\/inner/, 'guard');
  if (typeOf(v) === 'object' && typeof v.kind === 'string') s += `{${v.kind}}`;
  if (typeOf(v) === 'object' && typeof v.op === 'string') s += `{${v.op}}`;
  return s;
}

/** Every mutation of `machine`, each shape once (its first position in document order). */
function* walk(doc, full) {
  const seen = new Set();
  function* visit(v, tokens, parent) {
    const p = pointer(tokens);
    const shape = shapeOf(tokens, v);
    const levers = tokens[0] === 'levers' && tokens.length >= 2;
    if (!seen.has(shape) && (full || SHALLOW.test(p) || tokens.length === 0) && !(levers && seen.has('levers-member'))) {
      seen.add(shape);
      if (levers && tokens.length === 2) seen.add('levers-member');
      yield* mutationsAt(v, tokens, parent).map(([name, ops]) => [p, name, ops]);
    }
    if (typeOf(v) === 'array') for (let i = 0; i < v.length; i++) yield* visit(v[i], [...tokens, i], v);
    if (typeOf(v) === 'object') for (const k of Object.keys(v)) yield* visit(v[k], [...tokens, k], v);
  }
  yield* visit(doc, [], null);
}

/** The mutations no walk makes: versions, digests, duplicated states, the transitions' order. */
function special(doc) {
  const out = [];
  const replace = (name, path, value, digest = 'fix') => out.push([path, name, [{ op: 'replace', path, value }], digest]);
  for (const f of ['sessionpolicy-machine/2', 'sessionpolicy-machine/0', 'sessionpolicy-machine/1.0', 'sessionpolicy-machine', 'sessionpolicy-envelope/1', 'SESSIONPOLICY-MACHINE/1']) {
    replace(`format \`${f}\``, '/format', f);
  }
  const d = doc.digest;
  replace('digest in capitals', '/digest', d.toUpperCase(), 'keep');
  replace('digest without its prefix', '/digest', d.slice('sha256:'.length), 'keep');
  replace('digest of zeros', '/digest', 'sha256:' + '0'.repeat(64), 'keep');
  replace('digest with another prefix', '/digest', 'sha512:' + d.slice('sha256:'.length), 'keep');
  replace('digest one digit short', '/digest', d.slice(0, -1), 'keep');
  out.push(['/name', 'name changed after the digest', [{ op: 'replace', path: '/name', value: doc.name + '-2' }], 'keep']);
  out.push(['/transitions/0', 'a transition removed after the digest', [{ op: 'remove', path: '/transitions/0' }], 'keep']);
  out.push(['/states/1', 'a state twice', [{ op: 'copy', from: '/states/1', path: '/states/2' }]]);
  out.push(['/events/0', 'an event twice', [{ op: 'copy', from: '/events/0', path: '/events/1' }]]);
  out.push(['/states', 'states reversed', [{ op: 'replace', path: '/states', value: [...doc.states].reverse() }]]);
  out.push(['/transitions/0', 'the first transition twice', [{ op: 'copy', from: '/transitions/0', path: '/transitions/1' }]]);
  const n = doc.transitions.length;
  out.push(['/transitions', 'the last transition removed', [{ op: 'remove', path: `/transitions/${n - 1}` }]]);
  out.push(['/transitions', 'the last transition first', [{ op: 'copy', from: `/transitions/${n - 1}`, path: '/transitions/0' }, { op: 'remove', path: `/transitions/${n}` }]]);
  out.push(['', 'the document replaced with a list', [{ op: 'replace', path: '', value: [] }]]);
  out.push(['', 'the document replaced with a string', [{ op: 'replace', path: '', value: 'sessionpolicy-machine/1' }]]);
  return out;
}

/** The lines, without results, in a stable order. */
export function generate() {
  const lines = [];
  const ids = new Set();
  const machines = readdirSync(join(here, 'machines')).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5)).sort();
  for (const machine of machines) {
    const doc = JSON.parse(readFileSync(join(here, 'machines', machine + '.json'), 'utf8'));
    const all = [...[...walk(doc, FULL.includes(machine))].map(([p, name, ops]) => [p, name, ops, p.startsWith('/digest') ? 'keep' : 'fix']), ...special(doc)];
    for (const [p, name, ops, digest = 'fix'] of all) {
      const id = `${machine}: ${p === '' ? '(document)' : p}: ${name}`;
      if (ids.has(id)) continue;
      ids.add(id);
      lines.push(JSON.stringify({ id, machine, digest, ops }));
    }
  }
  return lines;
}

/** A committed line without its result: the generator's part. */
export function withoutResult(line) {
  const i = line.search(/,"(refuse|accept)":"[^"]*"\}$/);
  return i < 0 ? line : line.slice(0, i) + '}';
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const lines = generate();
  if (process.argv.includes('--check')) {
    const committed = readFileSync(OUTPUT, 'utf8').split('\n').filter((l) => l !== '').map(withoutResult);
    const same = committed.length === lines.length && committed.every((l, i) => l === lines[i]);
    console.log(same ? `generated-documents.jsonl is up to date (${lines.length} documents)` : 'generated-documents.jsonl is not what generate-documents.mjs writes: run it, then record with the Swift engine');
    process.exit(same ? 0 : 1);
  }
  writeFileSync(OUTPUT, lines.join('\n') + '\n');
  console.log(`${lines.length} documents written to ${OUTPUT}, without results: record them with RECORD_SNAPSHOTS=1 swift test --disable-xctest --filter GeneratedDocumentTests`);
}
