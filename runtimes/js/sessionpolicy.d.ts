// Type declarations of `sessionpolicy.mjs`, the JavaScript runtime of SessionPolicy.

/** The machine document format this runtime reads. */
export const FORMAT: 'sessionpolicy-machine/1';

/** The machine states, in the engine's order. */
export type MachineState = 'signed_out' | 'active' | 'suspended' | 'awaiting_biometric' | 'awaiting_idp' | 'read_only';
/** The event kinds, in the engine's order. */
export type EventKind =
  | 'launch'
  | 'resume'
  | 'background'
  | 'biometric_succeeded'
  | 'biometric_failed'
  | 'offline_login_failed'
  | 'idp_login_succeeded'
  | 'idp_login_failed'
  | 'token_refreshed'
  | 'refresh_failed'
  | 'account_deactivated'
  | 'tokens_revoked'
  | 'license_revoked'
  | 'biometric_enrollment_changed'
  | 'logout'
  | 'register'
  | 'device_session_detected';
export type Decision = 'allow' | 'require_biometric' | 'idp_login' | 'wipe';
/** How the user authenticated at the last IdP login (`none`: nothing protects the credential). */
export type AuthMode = 'none' | 'biometric' | 'password' | 'pin';
export type Network = 'online' | 'offline';
export type Keystore = 'hardware' | 'software' | 'none';
export type Integrity = 'ok' | 'compromised';
export type RefreshFailureCause = 'network' | 'invalid_token';
/** The OAuth scope an offline login names. */
export type Scope = 'no_auth_offline' | 'bio_auth_offline' | 'no_auth_grant' | 'bio_auth_grant' | 'bio_auth_grant_SE';
export type Notice = 'network_required' | 'read_only' | 'retry_later' | 'suggest_auth_mode_change' | 'unsynced_data';

/** The machine states, in the engine's order. */
export const STATES: readonly MachineState[];
/** The event kinds, in the engine's order. */
export const EVENTS: readonly EventKind[];

/**
 * A whole count: a number, or a BigInt past 2^53 (Swift's `Int` is 64 bits, and a stored state
 * is read back exactly).
 */
export type Count = number | bigint;

/** Milliseconds since the Unix epoch (what `Timestamp.parse` returns). */
export type Milliseconds = number;
/** A time given to a constructor: milliseconds, an RFC 3339 string or a `Date`. */
export type TimeInput = Milliseconds | string | Date;

/** One problem found in a document, a state or an event. */
export interface Diagnostic {
  severity: 'error';
  /** The stable code: `digest-mismatch`, `unknown-key`, `invalid-time`, ... */
  code: string;
  message: string;
  help?: string;
  /** The key the problem is at (`failures.biometric`). */
  path?: string;
  line?: number;
  column?: number;
}

/** A refusal: the input cannot be read as it is. Nothing is decided from it. */
export class SessionPolicyError extends Error {
  constructor(diagnostics: Diagnostic[]);
  readonly diagnostics: Diagnostic[];
  /** The first diagnostic's code. */
  readonly code: string;
}

/** Times: milliseconds since the epoch, read and written as RFC 3339 exactly as Swift does. */
export const Timestamp: {
  /** 0001-01-01T00:00:00Z. */
  readonly earliest: Milliseconds;
  /** 9999-12-31T23:59:59.999Z. */
  readonly latest: Milliseconds;
  /** RFC 3339 (`Z` or `±HH:MM`, fraction truncated to milliseconds) or a plain date; null if not one. */
  parse(text: string): Milliseconds | null;
  /** `2026-03-01T09:30:00Z`, with `.250` when there are milliseconds. */
  format(ms: Milliseconds): string;
};

/** Durations in whole seconds. */
export const TimeSpan: {
  /** 100 years of 366 days, in seconds. */
  readonly maximum: number;
  /** `30s`, `15m`, `24h`, `7d`, `2w`, `1d12h`: seconds, or null. */
  parse(text: string): number | null;
  /** `7d`, `1d12h`, `0s`. */
  format(seconds: number | bigint): string;
};

/** Consecutive failures per path. */
export interface Failures {
  biometric: Count;
  offlineLogin: Count;
  idpLogin: Count;
}

/** The fields a `SessionState` is made from; every one optional. */
export interface SessionStateInit {
  state?: MachineState;
  user?: string | null;
  device?: string | null;
  authMode?: AuthMode | null;
  lastIdPLogin?: TimeInput | null;
  lastOnline?: TimeInput | null;
  lastActivity?: TimeInput | null;
  highestTime?: TimeInput | null;
  failures?: Partial<Failures>;
  readOnly?: boolean;
  biometricLocked?: boolean;
}

/** The JSON shape of a session state (`state.toJSON()`). */
export interface SessionStateJSON {
  auth_mode?: AuthMode;
  biometric_locked: boolean;
  device?: string;
  failures: { biometric: Count; idp_login: Count; offline_login: Count };
  highest_time?: string;
  last_activity?: string;
  last_idp_login?: string;
  last_online?: string;
  read_only: boolean;
  state: MachineState;
  user?: string;
}

/** The state of one session on one device: what the caller stores and passes back. */
export class SessionState {
  /** A state; checked (an unknown word, a bad time or a negative count throws `SessionPolicyError`). */
  constructor(init?: SessionStateInit);
  /** A signed-out session with nothing known. */
  static readonly signedOut: SessionState;
  /** The strict reader: JSON text, UTF-8 bytes or a parsed value. Throws `SessionPolicyError`. */
  static fromJSON(input: string | Uint8Array | ArrayBuffer | object): SessionState;
  state: MachineState;
  user: string | null;
  device: string | null;
  authMode: AuthMode | null;
  lastIdPLogin: Milliseconds | null;
  lastOnline: Milliseconds | null;
  lastActivity: Milliseconds | null;
  highestTime: Milliseconds | null;
  failures: Failures;
  readOnly: boolean;
  /** The device's biometric path is closed until the next IdP login (kept by a wipe, a sign-out, an adoption). */
  biometricLocked: boolean;
  /** A copy. */
  copy(): SessionState;
  /** The bytes Swift writes for this state. */
  toJSONString(): string;
  /** The JSON value, members in Swift's order (`JSON.stringify` gives Swift's bytes). */
  toJSON(): SessionStateJSON;
}

/** Facts about the device an event comes from. */
export interface DeviceFacts {
  id: string | null;
  keystore: Keystore | null;
  integrity: Integrity | null;
}

/** The fields an `Event` is made from. */
export interface EventInit {
  /** What happened (`type` in JSON; accepted here too). */
  kind?: EventKind;
  type?: EventKind;
  time: TimeInput;
  network?: Network | null;
  user?: string | null;
  device?: Partial<DeviceFacts>;
  authMode?: AuthMode | null;
  cause?: RefreshFailureCause | null;
  unsyncedItems?: Count | null;
  appID?: string | null;
  /** Values of the policy's declared attributes, as text. */
  attributes?: Record<string, string>;
}

/** The JSON shape of an event (`event.toJSON()`). */
export interface EventJSON {
  app_id?: string;
  attributes?: Record<string, string>;
  auth_mode?: AuthMode;
  cause?: RefreshFailureCause;
  device?: { id?: string; integrity?: Integrity; keystore?: Keystore };
  network?: Network;
  time: string;
  type: EventKind;
  unsynced_items?: Count;
  user?: string;
}

/** Something that happened to a session, with its time and context. */
export class Event {
  /** An event; its values checked (`SessionPolicyError`), not the facts its kind needs. */
  constructor(init: EventInit);
  /** The strict reader: JSON text, UTF-8 bytes or a parsed value. Throws `SessionPolicyError`. */
  static fromJSON(input: string | Uint8Array | ArrayBuffer | object): Event;
  kind: EventKind;
  time: Milliseconds;
  network: Network | null;
  user: string | null;
  device: DeviceFacts;
  authMode: AuthMode | null;
  cause: RefreshFailureCause | null;
  unsyncedItems: Count | null;
  appID: string | null;
  attributes: Record<string, string>;
  /** The bytes Swift's `JSONEncoder` (sorted keys) writes for this event. */
  toJSONString(): string;
  toJSON(): EventJSON;
}

/** The JSON shape of an outcome (`outcome.toJSON()`). */
export interface OutcomeJSON {
  auth_mode: AuthMode | null;
  decision: Decision | null;
  message: string;
  notice_delay: string | null;
  notices: Notice[];
  reason: string;
  scope: Scope | null;
  state: SessionStateJSON;
  transition: number;
}

/** The result of evaluating one event. */
export class Outcome {
  /** The decision; null for events that need nothing from the user (`background`). */
  readonly decision: Decision | null;
  /** Why, machine-readable (`within_limits`, or a rule's own reason). */
  readonly reason: string;
  /** Why, for people. */
  readonly message: string;
  /** Notices for the user interface, sorted by name. */
  readonly notices: readonly Notice[];
  /** The OAuth scope of an offline login, or null. */
  readonly scope: Scope | null;
  /** For `idp_login`: the auth mode to use at the IdP (the one used last time), or null. */
  readonly authMode: AuthMode | null;
  /** How long the user sees the message before the client acts, in seconds; or null. */
  readonly noticeDelay: number | bigint | null;
  /** The transition that decided; -1 for an event refused before any guard. */
  readonly transition: number;
  /** The session's new state: store it. */
  readonly state: SessionState;
  /** The bytes Swift writes for this outcome. */
  toJSONString(): string;
  /** The JSON value, members in Swift's order (`JSON.stringify` gives Swift's bytes). */
  toJSON(): OutcomeJSON;
}

/** One guard tried while evaluating an event. */
export interface TraceStep {
  /** The transition's id; -1 for the check that the event has every fact it needs. */
  transition: number;
  /** The guard in policy vocabulary. */
  check: string;
  /** The facts it looked at. */
  facts: string;
  matched: boolean;
  /** The policy levers the transition came from. */
  levers: string[];
  /** Where the first of them is written in the policy file, if it is. */
  location: { file: string; line: number; column: number } | null;
}

/** A compiled session policy, read from its machine document. Immutable. */
export class PolicyMachine {
  private constructor();
  /**
   * Reads a machine document (text or UTF-8 bytes). Throws `SessionPolicyError` with
   * `unsupported-format`, `digest-mismatch`, `unknown-key`, `missing-key`, `wrong-type`,
   * `invalid-value`, `inconsistent-machine`, `invalid-json`, ...
   */
  static fromDocument(document: string | Uint8Array | ArrayBuffer, file?: string): PolicyMachine;
  readonly name: string;
  readonly description: string | null;
  /** `sha256:` and the hex SHA-256 of the canonical document without its digest. */
  readonly digest: string;
  /** Whether a server may tell a refused cross-app detection apart from "no session". */
  readonly revealsDetectionRefusal: boolean;
  /** The policy file's name the locations refer to, or null. */
  readonly source: string | null;
  /** The canonical document, digest included. */
  readonly document: string;
  readonly transitionCount: number;
  /** Evaluates `event` against `state`; pure (the state given is not changed). */
  evaluate(state: SessionState | SessionStateInit, event: Event | EventInit): Outcome;
  /** Evaluates and returns every guard tried, in order. */
  explain(state: SessionState | SessionStateInit, event: Event | EventInit): { outcome: Outcome; steps: TraceStep[] };
  /** Transition `id` as the document writes it, or null. */
  transition(id: number): object | null;
}

/** SHA-256 (FIPS 180-4) of bytes, or of a string's UTF-8. */
export function sha256(input: Uint8Array | string): Uint8Array;
/** The lowercase hex SHA-256. */
export function sha256Hex(input: Uint8Array | string): string;
/** The UTF-8 bytes of a string. */
export function utf8Encode(text: string): Uint8Array;

// Signed machines (docs/envelope.md)

/** The envelope's payload format. */
export const ENVELOPE_FORMAT: 'sessionpolicy-envelope/1';

/** The code of a refused envelope: the first failed check of docs/envelope.md. */
export type EnvelopeRefusalCode =
  | 'envelope-too-large'
  | 'envelope-malformed'
  | 'unsupported-envelope'
  | 'unsupported-algorithm'
  | 'signature-missing'
  | 'unpinned-key'
  | 'bad-signature'
  | 'wrong-policy'
  | 'not-yet-valid'
  | 'expired'
  | 'machine-refused'
  | 'machine-mismatch'
  | 'rollback';

/** An envelope: its text, or its bytes (as fetched or stored). */
export type EnvelopeInput = string | Uint8Array | ArrayBuffer;

/** The envelope an updater holds: the machine it decides with, and where it came from. */
export interface InstalledEnvelope {
  /** The policy's name, as the payload writes it. */
  readonly policy: string;
  readonly serial: number;
  /** Milliseconds since the epoch. */
  readonly issuedAt: number;
  /** Milliseconds since the epoch. */
  readonly expiresAt: number;
  /** The machine's digest (`sha256:...`). */
  readonly digest: string;
  /** The id of the pinned key that signed it. */
  readonly keyId: string;
  /**
   * The envelope exactly as it was given, white space included: store it, restore it at the next
   * start. Given a string, that string; given bytes, their text (an envelope that passes check 2
   * is ASCII), whose UTF-8 (`new TextEncoder().encode(envelope)`) is exactly the bytes given.
   */
  readonly envelope: string;
  /** The machine to decide with. */
  readonly machine: PolicyMachine;
}

export interface UpdateInstalled {
  readonly result: 'installed';
  readonly machine: PolicyMachine;
  readonly serial: number;
  readonly digest: string;
  /** The text to store: the envelope exactly as given (see `InstalledEnvelope.envelope`). */
  readonly envelope: string;
}
/** The machine held (the same digest) with a serial not larger: nothing changes. */
export interface UpdateUnchanged {
  readonly result: 'unchanged';
}
export interface UpdateRefused {
  readonly result: 'refused';
  readonly code: EnvelopeRefusalCode;
  readonly message: string;
}
/** What an updater did with an envelope. */
export type UpdateResult = UpdateInstalled | UpdateUnchanged | UpdateRefused;

export interface MachineUpdaterOptions {
  /** The policy's name the app expects (the machine's `name`). */
  policy: string;
  /**
   * The pinned public keys, PEM `PUBLIC KEY` (P-256, the point uncompressed): at least one. Each
   * is exactly one PEM block with nothing but white space around it, its base64 canonical
   * (padding as needed, unused bits zero).
   */
  keys: readonly string[];
  /**
   * The device clock's tolerance in milliseconds, an integer, 0 or more; 600000 (10 minutes)
   * unless given. A negative one throws `SessionPolicyError` `invalid-value`.
   */
  tolerance?: number;
}

/**
 * Verifies signed machines (`sessionpolicy-envelope/1`) against pinned keys before it installs
 * one; after a refusal it keeps the machine it had. Reads no clock and does no I/O.
 */
export class MachineUpdater {
  /**
   * Throws `SessionPolicyError` `invalid-key` for a key that is not a P-256 public key, or no key
   * (an empty list), then `invalid-value` for a negative tolerance.
   */
  constructor(options: MachineUpdaterOptions);
  readonly policy: string;
  readonly tolerance: number;
  /** The pinned keys' ids, in the order given. */
  readonly keyIds: readonly string[];
  /** The installed envelope, or null. */
  readonly current: InstalledEnvelope | null;
  /** The machine to decide with (`current.machine`), or null. */
  readonly machine: PolicyMachine | null;
  /**
   * Restores the stored envelope at start: checks 1 to 12, 15 and 16 (not the times, 13 and 14),
   * and 17 when a machine is already held: `installed`, `unchanged` (the machine held, a serial
   * not larger) or `refused` (`rollback`: another machine, a serial not larger).
   */
  restore(envelope: EnvelopeInput): UpdateResult;
  /** Offers a fetched envelope at `nowMillis` (the device's clock): every check. */
  offer(envelope: EnvelopeInput, nowMillis: number): UpdateResult;
}

/**
 * The key id of a P-256 public key in PEM: the lowercase hex SHA-256 of its DER. Throws
 * `invalid-key` (also for PEM that is not exactly one block with only white space around it, or
 * whose base64 is not canonical).
 */
export function keyId(pem: string): string;
