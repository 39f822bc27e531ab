// The conformance suite (spec/conformance/README.md) through this runtime: for every machine
// document and every vector, read the state and the event, evaluate, and compare the outcome
// with the bytes Swift wrote; or check that reading is refused with the vector's code.
//
//   node conformance.mjs            # prints "N passed, N failed"; exit status 1 on any failure
//
// `conformance.test.mjs` runs the same check under `node --test`.

import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { PolicyMachine, SessionState, Event } from './sessionpolicy.mjs';

const here = dirname(fileURLToPath(import.meta.url));
/** The suite's folder: `$SESSIONPOLICY_CONFORMANCE`, else `spec/conformance` of this repository. */
export const suite = process.env.SESSIONPOLICY_CONFORMANCE || join(here, '..', '..', 'spec', 'conformance');

/** The raw text of member `key` of a vector line whose members are `id, state, event, want|refuse`. */
function member(line, key, next) {
  const start = line.indexOf(`,"${key}":`) + key.length + 4;
  const end = next === null ? line.length - 1 : line.indexOf(`,"${next}":`, start);
  return line.slice(start, end);
}

/**
 * Runs every vector of every machine. Returns `{passed, failed, failures, perMachine}`; each
 * failure `{machine, id, got, want}`.
 */
export function runConformance() {
  const machines = readdirSync(join(suite, 'machines')).filter((f) => f.endsWith('.json')).sort();
  let passed = 0;
  let failed = 0;
  const failures = [];
  const perMachine = [];
  for (const file of machines) {
    const name = file.slice(0, -'.json'.length);
    const machine = PolicyMachine.fromDocument(readFileSync(join(suite, 'machines', file), 'utf8'), file);
    let ok = 0;
    let bad = 0;
    const fail = (id, got, want) => {
      bad += 1;
      failures.push({ machine: name, id, got, want });
    };
    const lines = readFileSync(join(suite, 'vectors', name + '.jsonl'), 'utf8').split('\n');
    for (const line of lines) {
      if (line === '') continue;
      const v = JSON.parse(line); // for `id` and `refuse` only: the compared bytes are the line's own
      const wantsRefusal = typeof v.refuse === 'string';
      const stateText = member(line, 'state', 'event');
      const eventText = member(line, 'event', wantsRefusal ? 'refuse' : 'want');
      if (wantsRefusal) {
        let code = 'none';
        try {
          SessionState.fromJSON(stateText);
          Event.fromJSON(eventText);
        } catch (e) {
          code = e.code;
        }
        if (code === v.refuse) ok += 1;
        else fail(v.id, code, v.refuse);
        continue;
      }
      const want = member(line, 'want', null);
      let got;
      try {
        const state = SessionState.fromJSON(stateText);
        const event = Event.fromJSON(eventText);
        const outcome = machine.evaluate(state, event);
        got = outcome.toJSONString();
        // The same bytes three more ways: JSON.stringify of the outcome, and the state and
        // event read written back as Swift wrote them into the vector.
        const viaStringify = JSON.stringify(outcome);
        if (viaStringify !== got) got = 'JSON.stringify differs: ' + viaStringify;
        else if (state.toJSONString() !== stateText) got = 'state written back differs: ' + state.toJSONString();
        else if (event.toJSONString() !== eventText) got = 'event written back differs: ' + event.toJSONString();
      } catch (e) {
        got = `threw ${e && e.code ? e.code : ''} ${e && e.message}`;
      }
      if (got === want) ok += 1;
      else fail(v.id, got, want);
    }
    passed += ok;
    failed += bad;
    perMachine.push({ machine: name, passed: ok, failed: bad });
  }
  // Machine documents: each must be refused with its code, or accepted with its digest.
  let ok = 0;
  let bad = 0;
  for (const line of readFileSync(join(suite, 'documents.jsonl'), 'utf8').split('\n')) {
    if (line === '') continue;
    const v = JSON.parse(line);
    let got;
    try {
      got = 'accepted ' + PolicyMachine.fromDocument(v.document, 'machine.json').digest;
    } catch (e) {
      got = e && e.code ? e.code : `threw ${e && e.message}`;
    }
    const want = typeof v.refuse === 'string' ? v.refuse : 'accepted ' + v.accept;
    if (got === want) ok += 1;
    else {
      bad += 1;
      failures.push({ machine: 'documents', id: v.id, got, want });
    }
  }
  passed += ok;
  failed += bad;
  perMachine.push({ machine: 'documents', passed: ok, failed: bad });
  return { passed, failed, failures, perMachine };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const r = runConformance();
  for (const m of r.perMachine) console.log(`${m.machine}: ${m.passed} passed, ${m.failed} failed`);
  for (const f of r.failures.slice(0, 10)) console.log(`FAILED ${f.machine}: ${f.id}\n  got  ${f.got}\n  want ${f.want}`);
  console.log(`${r.passed} passed, ${r.failed} failed`);
  process.exit(r.failed === 0 && r.passed > 0 ? 0 : 1);
}
