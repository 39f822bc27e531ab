// SessionPolicy: the JavaScript runtime of a compiled session policy.
//
// Loads a machine document (`sessionpolicy-machine/1`, docs/machine-format.md) and evaluates
// events exactly as the Swift engine does (`StateMachine+Evaluation.swift`): the same outcome,
// byte for byte, for the same machine, state and event (spec/conformance). ES modules, no
// dependencies, no platform imports: Node 18+, browsers and React Native (Metro and every
// bundler follow the module graph from here).
//
// Fails closed: a document, state or event it cannot read is refused with diagnostics
// (`SessionPolicyError`), never read with defaults; an incomplete event is `idp_login`.
//
// `MachineUpdater` takes signed machines (`sessionpolicy-envelope/1`, docs/envelope.md) and
// verifies them against pinned P-256 keys (`src/p256.mjs`, pure JavaScript) before it installs one.
//
// This file is the published entry and only re-exports; the code is in src/, one module per
// section (README.md, "Files"). The declarations are in sessionpolicy.d.ts.

export { SessionPolicyError } from './src/errors.mjs';
export { utf8Encode } from './src/text.mjs';
export { sha256, sha256Hex } from './src/sha256.mjs';
export { STATES, EVENTS } from './src/vocabulary.mjs';
export { Timestamp, TimeSpan } from './src/time.mjs';
export { SessionState, Event } from './src/state.mjs';
export { Outcome } from './src/outcome.mjs';
export { FORMAT } from './src/document.mjs';
export { PolicyMachine } from './src/machine.mjs';
export { ENVELOPE_FORMAT, keyId, MachineUpdater } from './src/envelope.mjs';
