// The signed-machine vectors (spec/conformance/README.md: `envelopes.jsonl`, `keys.jsonl`)
// through this runtime's MachineUpdater: each envelope offered (or restored) gives the result,
// serial and digest, or the refusal code, that Swift gives; each key is accepted with its id or
// refused with `invalid-key`.
//
//   node envelope-conformance.mjs   # "envelope vectors: N passed, N failed" and "key vectors: ..."
//
// `test/envelope-conformance.test.mjs` runs the same under `node --test`. The two files are part
// of the suite: when one is missing, both say so and fail (they never skip).

import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { MachineUpdater, SessionPolicyError, keyId } from './sessionpolicy.mjs';
import { suite } from './conformance.mjs';

const lines = (file) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));

/** What a result is, in the vectors' terms: `installed N sha256:...`, `unchanged`, `refused CODE`. */
function describe(r) {
  if (r.result === 'installed') return `installed ${r.serial} ${r.digest}`;
  if (r.result === 'refused') return `refused ${r.code}`;
  return r.result;
}

/**
 * Runs every envelope vector: `{present, passed, failed, failures}` (`present` false when the
 * suite has no `envelopes.jsonl`, which the callers count as a failure); each failure `{id, got,
 * want}`.
 */
export function runEnvelopeVectors(dir = suite) {
  const file = join(dir, 'envelopes.jsonl');
  if (!existsSync(file)) return { present: false, passed: 0, failed: 0, failures: [] };
  const vectors = lines(file);
  const byId = new Map(vectors.map((v) => [v.id, v]));
  const pems = new Map();
  const pem = (name) => {
    if (!pems.has(name)) pems.set(name, readFileSync(join(dir, 'keys', `${name}.pub.pem`), 'utf8'));
    return pems.get(name);
  };
  let passed = 0;
  const failures = [];
  for (const v of vectors) {
    const want = v.want.result === 'installed' ? `installed ${v.want.serial} ${v.want.digest}` : v.want.result === 'refused' ? `refused ${v.want.code}` : v.want.result;
    let got;
    try {
      const u = new MachineUpdater({ policy: v.policy, keys: v.keys.map(pem), tolerance: v.tolerance });
      if (v.after !== null && v.after !== undefined) {
        const first = byId.get(v.after);
        if (first === undefined) throw new Error(`\`after\` names ${v.after}, which is not a vector`);
        const r = u.offer(first.envelope, v.now);
        if (r.result !== 'installed') throw new Error(`the envelope of ${v.after}, offered first, was not installed: ${describe(r)}`);
      }
      const r = v.restore ? u.restore(v.envelope) : u.offer(v.envelope, v.now);
      got = describe(r);
      // An installed envelope is the one held, with the text to store (exactly the text given),
      // which restores.
      if (r.result === 'installed') {
        const c = u.current;
        if (c.serial !== r.serial || c.digest !== r.digest || c.machine !== r.machine) got += ' (current differs)';
        if (r.envelope !== v.envelope || c.envelope !== v.envelope) got += ' (the envelope handed back is not the one given)';
        const again = new MachineUpdater({ policy: v.policy, keys: v.keys.map(pem), tolerance: v.tolerance }).restore(c.envelope);
        if (describe(again) !== describe(r)) got += ` (the stored envelope restores as ${describe(again)})`;
      }
    } catch (e) {
      got = `threw ${e && e.code ? e.code + ' ' : ''}${e && e.message}`;
    }
    if (got === want) passed += 1;
    else failures.push({ id: v.id, got, want });
  }
  return { present: true, passed, failed: failures.length, failures };
}

/** Runs every key vector: `{present, passed, failed, failures}` (`present` as above, for `keys.jsonl`). */
export function runKeyVectors(dir = suite) {
  const file = join(dir, 'keys.jsonl');
  if (!existsSync(file)) return { present: false, passed: 0, failed: 0, failures: [] };
  let passed = 0;
  const failures = [];
  for (const v of lines(file)) {
    const want = typeof v.refuse === 'string' ? v.refuse : `accepted ${v.key_id}`;
    let got;
    try {
      got = `accepted ${keyId(v.pem)}`;
      // The same key pinned in an updater.
      const ids = new MachineUpdater({ policy: 'p', keys: [v.pem] }).keyIds;
      if (`accepted ${ids[0]}` !== got) got += ` (pinned as ${ids[0]})`;
    } catch (e) {
      got = e instanceof SessionPolicyError ? e.code : `threw ${e && e.message}`;
    }
    if (got === want) passed += 1;
    else failures.push({ id: v.id, got, want });
  }
  return { present: true, passed, failed: failures.length, failures };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  let status = 0;
  for (const [what, file, r] of [
    ['envelope', 'envelopes.jsonl', runEnvelopeVectors()],
    ['key', 'keys.jsonl', runKeyVectors()],
  ]) {
    if (!r.present) {
      console.log(`${what} vectors: FAILED: ${join(suite, file)} not found (it is part of the suite)`);
      status = 1;
      continue;
    }
    for (const f of r.failures.slice(0, 10)) console.log(`FAILED ${what}: ${f.id}\n  got  ${f.got}\n  want ${f.want}`);
    console.log(`${what} vectors: ${r.passed} passed, ${r.failed} failed`);
    if (r.failed > 0 || r.passed === 0) status = 1;
  }
  process.exit(status);
}
