// Benchmark of `PolicyMachine.evaluate`: the event mix of the Swift benchmark
// (Benchmarks/Benchmarks/Evaluation/Evaluation.swift), for every shipped machine document:
// launch-none-allow, launch-biometric-require, launch-expired, biometric-succeeded-allow,
// background, each built the same way from the policy's limits. Not a test: it prints figures.
//
//   node bench.mjs [--rounds 31] [--per-round 20000] [--warmup 200000]
//
// For each case: warm-up, then `rounds` timed rounds of `per-round` evaluations; the figure is
// the median over rounds of the time per evaluation (state copy and outcome included, as
// Swift's `evaluate(_:_:)`). "overall" is the median over every case's rounds; "mixed" runs
// every case of every machine interleaved in one loop (the call sites see them all).

import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { PolicyMachine, SessionState, Event, Timestamp } from './sessionpolicy.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf('--' + name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const ROUNDS = option('rounds', 31);
const PER_ROUND = option('per-round', 20000);
const WARMUP = option('warmup', 200000);

const here = dirname(fileURLToPath(import.meta.url));
const folder = process.env.SESSIONPOLICY_MACHINES || join(here, '..', '..', 'spec', 'conformance', 'machines');

const DAY = 86400;
const now = Timestamp.parse('2026-03-01T09:00:00Z');
const device = { id: 'phone-1', keystore: 'hardware', integrity: 'ok' };

/** Every guard of a machine's transitions, switched guards' inner ones included. */
function guards(machine) {
  const out = [];
  for (let i = 0; i < machine.transitionCount; i++) {
    let g = machine.transition(i).guard;
    out.push(g);
    if (g.kind === 'switched') out.push(g.inner);
  }
  return out;
}

/** The cases for one machine, derived from its limits as Evaluation.swift derives them. */
function cases(machine) {
  // session.max, session.idle and offline.window, as the machine's guards carry them.
  const byKind = new Map();
  for (const g of guards(machine)) {
    if (g.kind === 'session_max_exceeded' || g.kind === 'idle_exceeded' || g.kind === 'offline_window_exceeded') {
      byKind.set(g.kind, g.limit_seconds);
    }
  }
  const limits = [...byKind.values()];
  const within = Math.max(4, Math.trunc((limits.length ? Math.min(...limits) : 4 * DAY) / 2));
  const ago = (seconds) => now - seconds * 1000;
  const resting = (authMode, state = 'suspended') =>
    new SessionState({
      state, user: 'alice', device: 'phone-1', authMode,
      lastIdPLogin: ago(within), lastOnline: ago(Math.trunc(within / 2)),
      lastActivity: ago(Math.trunc(within / 4)), highestTime: ago(Math.trunc(within / 4)),
    });
  const launch = new Event({ kind: 'launch', time: now, network: 'offline', user: 'alice', device });
  const list = [
    { name: 'launch-none-allow', state: resting('none'), event: launch, expected: ['allow'] },
    { name: 'launch-biometric-require', state: resting('biometric'), event: launch, expected: ['require_biometric'] },
    {
      name: 'biometric-succeeded-allow', state: resting('biometric', 'awaiting_biometric'),
      event: new Event({ kind: 'biometric_succeeded', time: now, user: 'alice', device }), expected: ['allow'],
    },
    {
      name: 'background', state: resting('biometric', 'active'),
      event: new Event({ kind: 'background', time: now, user: 'alice', device }), expected: [null],
    },
  ];
  if (limits.length) {
    const past = Math.max(...limits) + DAY;
    const expired = new SessionState({
      state: 'suspended', user: 'alice', device: 'phone-1', authMode: 'biometric',
      lastIdPLogin: ago(past), lastOnline: ago(past), lastActivity: ago(past), highestTime: ago(past),
    });
    list.splice(2, 0, { name: 'launch-expired', state: expired, event: launch, expected: ['idp_login', 'wipe'] });
  } else {
    console.error(`note: ${machine.name} sets no session max, idle limit or offline window: no launch-expired case`);
  }
  return list;
}

let sink = 0;

/** Nanoseconds per evaluation of each timed round. */
function measure(machine, state, event) {
  for (let i = 0; i < WARMUP; i++) sink += machine.evaluate(state, event).transition;
  const perRound = [];
  for (let r = 0; r < ROUNDS; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < PER_ROUND; i++) sink += machine.evaluate(state, event).transition;
    perRound.push(Number(process.hrtime.bigint() - start) / PER_ROUND);
  }
  return perRound;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const machines = readdirSync(folder).filter((f) => f.endsWith('.json')).sort()
  .map((f) => PolicyMachine.fromDocument(readFileSync(join(folder, f), 'utf8'), f));

console.log(`node ${process.version}, ${ROUNDS} rounds x ${PER_ROUND} evaluations per case after ${WARMUP} warm-up evaluations`);
console.log('median ns per evaluate (state copy and outcome included)\n');
const rows = [];
const all = [];
const mix = [];
for (const machine of machines) {
  for (const c of cases(machine)) {
    const outcome = machine.evaluate(c.state, c.event);
    if (!c.expected.includes(outcome.decision)) {
      console.error(`note: ${machine.name}/${c.name} skipped: the policy decides ${outcome.decision ?? 'none'} (${outcome.reason}), not ${c.expected.map((d) => d ?? 'none').join(' or ')}`);
      continue;
    }
    const rounds = measure(machine, c.state, c.event);
    all.push(...rounds);
    mix.push([machine, c.state, c.event]);
    rows.push([`${machine.name}/${c.name}`, median(rounds), outcome.decision ?? 'none', outcome.reason]);
  }
}
const width = Math.max(...rows.map((r) => r[0].length));
for (const [name, ns, decision, reason] of rows) {
  console.log(`${name.padEnd(width)}  ${ns.toFixed(0).padStart(6)} ns   ${decision} (${reason})`);
}

// Every case interleaved: the evaluator's call sites see every machine, state and event.
const mixed = [];
for (let r = 0; r < ROUNDS; r++) {
  const start = process.hrtime.bigint();
  const n = Math.ceil(PER_ROUND / mix.length);
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < mix.length; k++) sink += mix[k][0].evaluate(mix[k][1], mix[k][2]).transition;
  }
  mixed.push(Number(process.hrtime.bigint() - start) / (n * mix.length));
}
console.log(`\noverall (median of every case's rounds): ${median(all).toFixed(0)} ns per evaluate, ${rows.length} cases`);
console.log(`mixed (every case interleaved):         ${median(mixed).toFixed(0)} ns per evaluate`);
console.log(`max case median: ${Math.max(...rows.map((r) => r[1])).toFixed(0)} ns (target: 1000 ns)`);
if (sink === 0.5) console.log(sink); // keeps the results alive
