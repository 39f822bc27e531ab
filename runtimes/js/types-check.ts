// Compiled with `tsc --noEmit --strict` by test.sh: the declarations describe a usable API.
import {
  PolicyMachine, SessionState, Event, Outcome, SessionPolicyError, Timestamp, TimeSpan, Decision, TraceStep, FORMAT,
} from '@sessionpolicy/runtime';

declare const documentText: string;
declare function store(key: string, value: string): void;

const machine: PolicyMachine = PolicyMachine.fromDocument(documentText);
const name: string = machine.name;
const digest: string = machine.digest;
const reveals: boolean = machine.revealsDetectionRefusal;
const format: 'sessionpolicy-machine/1' = FORMAT;

let state: SessionState = SessionState.signedOut;
try {
  state = SessionState.fromJSON('{"state":"active"}');
} catch (e) {
  if (e instanceof SessionPolicyError) {
    const code: string = e.code;
    const first: string | undefined = e.diagnostics[0]?.help;
    console.log(code, first);
  }
}

const event = new Event({
  kind: 'launch',
  time: Date.now(),
  network: 'offline',
  user: 'alice',
  device: { id: 'phone-1', keystore: 'hardware', integrity: 'ok' },
  attributes: { license: 'assigned' },
});
const parsed: Event = Event.fromJSON({ type: 'resume', time: '2026-03-01T09:00:00Z', network: 'online' });

const outcome: Outcome = machine.evaluate(state, event);
const decision: Decision | null = outcome.decision;
switch (outcome.decision) {
  case 'allow':
  case 'require_biometric':
  case 'idp_login':
  case 'wipe':
  case null:
    break;
}
store('session', outcome.state.toJSONString());
const bytes: string = JSON.stringify(outcome);
const delay: number | bigint | null = outcome.noticeDelay;
const notices: readonly string[] = outcome.notices;
const { steps }: { steps: TraceStep[] } = machine.explain(state, parsed);
const ms: number | null = Timestamp.parse('2026-03-01T09:00:00Z');
const text: string = Timestamp.format(ms ?? 0);
const week: number | null = TimeSpan.parse('7d');
const fromObjects: Outcome = machine.evaluate({ state: 'active', authMode: 'none', lastIdPLogin: new Date() }, { type: 'background', time: '2026-03-01T09:00:00Z' });

// @ts-expect-error: an unknown state is not a MachineState
new SessionState({ state: 'flying' });
// @ts-expect-error: PolicyMachine is made by fromDocument
new PolicyMachine();

console.log(name, digest, reveals, format, decision, bytes, delay, notices, steps, text, week, fromObjects);

// Signed machines.
import { MachineUpdater, UpdateResult, InstalledEnvelope, EnvelopeRefusalCode, keyId, ENVELOPE_FORMAT } from '@sessionpolicy/runtime';

declare const pinnedPEM: string;
declare const fetchedBytes: Uint8Array;
declare function load(key: string): string | null;

const updater = new MachineUpdater({ policy: 'spendiq', keys: [pinnedPEM] });
const withTolerance = new MachineUpdater({ policy: 'spendiq', keys: [pinnedPEM], tolerance: 60_000 });
const stored = load('machine-envelope');
if (stored !== null) {
  const restored = updater.restore(stored);
  if (restored.result === 'refused') console.log(restored.code, restored.message);
}
const result: UpdateResult = updater.offer(fetchedBytes, Date.now());
switch (result.result) {
  case 'installed':
    store('machine-envelope', result.envelope);
    console.log(result.machine.digest, result.serial);
    break;
  case 'unchanged':
    break;
  case 'refused': {
    const refusal: EnvelopeRefusalCode = result.code;
    console.log(refusal, result.message);
    break;
  }
}
const held: InstalledEnvelope | null = updater.current;
const deciding: PolicyMachine | null = updater.machine;
if (held !== null) {
  const o: Outcome = held.machine.evaluate(state, event);
  console.log(held.serial, held.issuedAt, held.expiresAt, held.keyId, held.digest, held.policy, o);
}
const id: string = keyId(pinnedPEM);
const envelopeFormat: 'sessionpolicy-envelope/1' = ENVELOPE_FORMAT;
const ids: readonly string[] = withTolerance.keyIds;
// @ts-expect-error: the keys are a list
new MachineUpdater({ policy: 'spendiq', keys: pinnedPEM });
// @ts-expect-error: offer needs the time
updater.offer(fetchedBytes);
// Over a machine held, a restore applies check 17 too: it may say unchanged.
const restoredAgain: UpdateResult = updater.restore(fetchedBytes);
if (restoredAgain.result === 'unchanged') console.log('the machine held');
// @ts-expect-error: restore takes no time
updater.restore(fetchedBytes, Date.now());
console.log(id, envelopeFormat, ids, deciding);
