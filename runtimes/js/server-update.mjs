// The JavaScript MachineUpdater against envelopes fetched from a running policyctl-serve
// (runtimes/server-update.sh starts the server, fetches them, and runs this):
//   node runtimes/js/server-update.mjs ENVELOPE-1 ENVELOPE-2 A.PUB.PEM B.PUB.PEM NOW-MS
// ENVELOPE-1 is the served envelope of policies/spendiq.yaml, ENVELOPE-2 the one served after the
// policy file changed; A.PUB.PEM is the server's signing key, B.PUB.PEM another key. Exits 1 with
// the failed check on stderr; prints "js: updated from the server: N checks passed".
// Not a `*.test.mjs`: `node --test` does not run it (it needs the server's envelopes).
import { readFileSync } from 'node:fs';
import { MachineUpdater, PolicyMachine, SessionState, Event } from './sessionpolicy.mjs';

const [file1, file2, pubA, pubB, nowArg] = process.argv.slice(2);
if (nowArg === undefined) {
  console.error('usage: node server-update.mjs ENVELOPE-1 ENVELOPE-2 A.PUB.PEM B.PUB.PEM NOW-MS');
  process.exit(2);
}
const now = Number(nowArg);
const keyA = readFileSync(pubA, 'utf8');
const keyB = readFileSync(pubB, 'utf8');
const envelope1 = readFileSync(file1, 'utf8');
const envelope2 = readFileSync(file2, 'utf8');

let passed = 0;
function check(what, ok, detail) {
  if (!ok) {
    console.error(`js: FAILED: ${what}${detail === undefined ? '' : ` (${detail})`}`);
    process.exit(1);
  }
  passed++;
}
const show = (r) => (r.result === 'refused' ? `refused ${r.code}: ${r.message}` : r.result);

/** The machine document inside an envelope's payload (to compare digests independently). */
function machineOf(envelope) {
  const payload = JSON.parse(Buffer.from(envelope.trim().split('.')[1], 'base64url').toString('utf8'));
  return PolicyMachine.fromDocument(payload.machine);
}

const updater = new MachineUpdater({ policy: 'spendiq', keys: [keyA] });

// 1. The served envelope installs: the machine inside, policy spendiq.
let r = updater.offer(envelope1, now);
check('envelope-1 installs', r.result === 'installed', show(r));
const first = updater.current;
const machine1 = machineOf(envelope1);
check(
  'envelope-1 installs its machine (digest, policy spendiq)',
  first.digest === machine1.digest && first.digest === first.machine.digest && first.policy === 'spendiq',
  `${first.digest} ${first.policy}, the machine's ${machine1.digest}`,
);

// 2. The same envelope again: unchanged.
r = updater.offer(envelope1, now);
check('envelope-1 again is unchanged', r.result === 'unchanged', show(r));

// 3 to 5. Bad variants: refused with their code; the held machine stays.
const parts = envelope1.trim().split('.');
const payload = parts[1].split('');
const mid = Math.floor(payload.length / 2);
payload[mid] = payload[mid] === 'A' ? 'B' : 'A';
const bad = [
  ['one payload character changed', `${parts[0]}.${payload.join('')}.${parts[2]}`, 'bad-signature'],
  ['the signature stripped', `${parts[0]}.${parts[1]}.`, 'signature-missing'],
  ['truncated to half', envelope1.slice(0, Math.floor(envelope1.length / 2)), 'envelope-malformed'],
];
for (const [what, envelope, code] of bad) {
  r = updater.offer(envelope, now);
  check(
    `${what}: refused ${code}, the held machine stays`,
    r.result === 'refused' && r.code === code && updater.current.digest === first.digest,
    `${show(r)}; held ${updater.current && updater.current.digest}`,
  );
}

// 6. An updater pinned to key b only: unpinned-key, nothing held.
const other = new MachineUpdater({ policy: 'spendiq', keys: [keyB] });
r = other.offer(envelope1, now);
check('pinned to key b only: refused unpinned-key', r.result === 'refused' && r.code === 'unpinned-key' && other.current === null, show(r));

// 7. The changed policy's envelope installs: a larger serial, another machine.
r = updater.offer(envelope2, now);
check('envelope-2 installs', r.result === 'installed', show(r));
const second = updater.current;
check(
  'envelope-2 has a larger serial and another machine (its own digest)',
  second.serial > first.serial && second.digest !== first.digest && second.digest === machineOf(envelope2).digest,
  `serial ${first.serial} -> ${second.serial}, digest ${first.digest} -> ${second.digest}`,
);

// 8. Envelope-1 again: a rollback; envelope-2's machine stays.
r = updater.offer(envelope1, now);
check(
  'envelope-1 after envelope-2: refused rollback, envelope-2 stays',
  r.result === 'refused' && r.code === 'rollback' && updater.current.digest === second.digest,
  `${show(r)}; held ${updater.current.digest}`,
);

// 9. The held machine decides: a launch online on a fresh session.
let outcome;
try {
  outcome = updater.machine.evaluate(SessionState.signedOut, new Event({ kind: 'launch', time: now, network: 'online' }));
} catch (e) {
  check('the held machine evaluates a launch', false, String(e));
}
check('the held machine evaluates a launch', outcome !== undefined && outcome.decision !== null && outcome.reason !== '', JSON.stringify(outcome));

console.log(
  `js: updated from the server: ${passed} checks passed (serial ${first.serial} -> ${second.serial}, ` +
    `${first.digest.slice(0, 19)} -> ${second.digest.slice(0, 19)}; launch: ${outcome.decision} ${outcome.reason})`,
);
