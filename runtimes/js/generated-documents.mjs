// The generated machine documents (spec/conformance/generated-documents.jsonl): each shipped
// machine with a list of JSON Patch operations applied, its digest written anew when the line
// says `fix`, written canonically and loaded; refused with the Swift engine's code, or accepted
// with its digest. `node generated-documents.mjs` prints "generated documents: N passed, N failed".
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { PolicyMachine, sha256Hex } from './sessionpolicy.mjs';
import { canonicalText } from './src/json.mjs';
import { suite } from './conformance.mjs';

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The tokens of an RFC 6901 pointer. */
function tokens(pointer) {
  if (pointer === '') return [];
  return pointer.slice(1).split('/').map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function at(doc, toks) {
  let v = doc;
  for (const t of toks) {
    if (Array.isArray(v)) v = v[Number(t)];
    else if (isObject(v) && Object.prototype.hasOwnProperty.call(v, t)) v = v[t];
    else throw new Error(`no value at /${toks.join('/')}`);
    if (v === undefined) throw new Error(`no value at /${toks.join('/')}`);
  }
  return v;
}

/**
 * `doc` with the RFC 6902 operations `ops` (add, remove, replace, copy) applied. `doc` is not
 * changed: the objects and lists on each operation's path are copied, the rest shared.
 */
export function applyOps(doc, ops) {
  for (const op of ops) {
    const path = tokens(op.path);
    const value = op.op === 'copy' ? at(doc, tokens(op.from)) : op.value;
    doc = changed(doc, path, op.op === 'copy' ? 'add' : op.op, value);
  }
  return doc;
}

/** A copy of `v` with `op` applied at `path`. */
function changed(v, path, op, value) {
  if (path.length === 0) {
    if (op !== 'replace') throw new Error(`${op} of the whole document`);
    return value;
  }
  const [key, ...rest] = path;
  if (Array.isArray(v)) {
    const copy = [...v];
    const i = key === '-' ? copy.length : Number(key);
    if (rest.length > 0) copy[i] = changed(copy[i], rest, op, value);
    else if (op === 'remove') copy.splice(i, 1);
    else if (op === 'replace') copy[i] = value;
    else copy.splice(i, 0, value);
    return copy;
  }
  if (!isObject(v)) throw new Error(`no value at ${key}`);
  const copy = { ...v };
  if (rest.length > 0) copy[key] = changed(copy[key], rest, op, value);
  else if (op === 'remove') delete copy[key];
  else copy[key] = value;
  return copy;
}

/** The document text of a generated line. */
export function documentText(line, bases) {
  const doc = applyOps(bases[line.machine], line.ops);
  if (line.digest === 'fix' && isObject(doc) && Object.prototype.hasOwnProperty.call(doc, 'digest')) {
    const { digest, ...rest } = doc;
    return canonicalText({ ...rest, digest: 'sha256:' + sha256Hex(canonicalText(rest)) });
  }
  return canonicalText(doc);
}

/** Runs every generated document: `{passed, failed, failures}`. */
export function runGeneratedDocuments(dir = suite) {
  const bases = {};
  const failures = [];
  let passed = 0;
  for (const text of readFileSync(join(dir, 'generated-documents.jsonl'), 'utf8').split('\n')) {
    if (text === '') continue;
    const line = JSON.parse(text);
    bases[line.machine] ??= JSON.parse(readFileSync(join(dir, 'machines', line.machine + '.json'), 'utf8'));
    let got;
    try {
      got = 'accepted ' + PolicyMachine.fromDocument(documentText(line, bases), 'machine.json').digest;
    } catch (e) {
      got = e && e.code ? e.code : `threw ${e && e.message}`;
    }
    const want = typeof line.refuse === 'string' ? line.refuse : typeof line.accept === 'string' ? 'accepted ' + line.accept : 'no result recorded';
    if (got === want) passed += 1;
    else failures.push({ id: line.id, got, want });
  }
  return { passed, failed: failures.length, failures };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const r = runGeneratedDocuments();
  for (const f of r.failures.slice(0, 20)) console.log(`FAILED ${f.id}\n  got  ${f.got}\n  want ${f.want}`);
  console.log(`generated documents: ${r.passed} passed, ${r.failed} failed`);
  process.exit(r.failed === 0 && r.passed > 0 ? 0 : 1);
}
