// `PolicyMachine`: a loaded machine document, and the evaluation of an event against a state
// (StateMachine+Evaluation.swift).

import { Action, YES, cleared, hasAttributes, highestSeen, truth, typeAccepts, typeName } from './conditions.mjs';
import { DocumentReader, documentValue, groupTransitions } from './document.mjs';
import { refuse } from './errors.mjs';
import { canonicalText, parseJSON } from './json.mjs';
import { Outcome } from './outcome.mjs';
import { Event, SessionState, failuresOf } from './state.mjs';
import { compareUTF8, containsText, increment, sameText } from './text.mjs';
import { EARLIEST, LATEST } from './time.mjs';
import { describeGuard, guardFacts } from './explanation.mjs';
import { EVENTS, EVENT_INDEX, FX_ADOPT, FX_CLEAR, FX_COUNT_BIOMETRIC, FX_COUNT_IDP, FX_COUNT_OFFLINE, FX_ESTABLISH, FX_LOCK_BIOMETRIC, FX_RECORD_ACTIVITY, FX_RECORD_ONLINE, FX_RESET_BIOMETRIC, FX_SET_READ_ONLY, MESSAGE_UNEXPECTED_EVENT, NOTICE_LISTS, N_NETWORK_REQUIRED, N_READ_ONLY, REQUIRED_FACTS, STATE_INDEX } from './vocabulary.mjs';

/**
 * A compiled session policy, read from its machine document: evaluates events against session
 * states, exactly as the Swift engine. Immutable: load once, evaluate many times.
 */
export class PolicyMachine {
  /**
   * Reads a machine document (text, or UTF-8 bytes). Throws `SessionPolicyError`: not JSON
   * (`invalid-json`), another format (`unsupported-format`), a digest that does not match
   * (`digest-mismatch`), a member unknown or missing (`unknown-key`, `missing-key`), a value
   * of the wrong type or an unknown name (`wrong-type`, `invalid-value`), or a machine this
   * runtime cannot run as written (`inconsistent-machine`).
   */
  static fromDocument(document, file = 'machine.json') {
    if (typeof document !== 'string' && !(document instanceof Uint8Array) && !(document instanceof ArrayBuffer)) {
      throw refuse('wrong-type', 'a machine document is JSON text or its UTF-8 bytes', null);
    }
    const root = parseJSON(document);
    if (root === null) {
      throw refuse('empty-document', 'the machine document is empty', { line: 1, column: 1 }, 'write one with `policyctl compile POLICY --format machine`');
    }
    const { machine, digest, text } = new DocumentReader(file).machine(root);
    return new PolicyMachine(machine, digest, text, file);
  }

  /** Use `PolicyMachine.fromDocument`. */
  constructor(machine, digest, text, file) {
    if (machine === undefined || typeof digest !== 'string') {
      throw new TypeError('use PolicyMachine.fromDocument(text) to load a machine');
    }
    /** The policy's name. */
    this.name = machine.name;
    /** What the policy is for, or null. */
    this.description = machine.description;
    /** `sha256:` and the hex SHA-256 of the canonical document without its digest. */
    this.digest = digest;
    /** Whether a server may tell a refused cross-app detection apart from "no session". */
    this.revealsDetectionRefusal = machine.revealsDetectionRefusal;
    /** The policy file's name the locations refer to, or null. */
    this.source = machine.source;
    this._file = file;
    this._text = text;
    this._model = machine;
    const { list, table } = groupTransitions(machine.transitions);
    this._transitions = list;
    this._table = table;
    this._guards = list.map((t) => t.guard);
    this._actions = list.map((t) => new Action(t.action));
    this._rules = machine.rules;
    this._attributes = machine.attributes;
    this._trusted = machine.trustedApps;
    this._scopes = machine.scopes;
    Object.freeze(this);
  }

  /** The document, canonical, digest included: equal to the canonical text received. */
  get document() {
    return this._text;
  }

  /** The number of transitions. */
  get transitionCount() {
    return this._transitions.length;
  }

  /**
   * Evaluates `event` against `state`: the decision and the new state. Pure: `state` is not
   * changed, no clock is read. An event missing a fact its kind needs, or reporting an
   * attribute the policy does not declare, gets `idp_login` (`invalid_event`), never `allow`.
   */
  evaluate(state, event) {
    const out = new Outcome();
    out.state = state instanceof SessionState ? state.copy() : new SessionState(state);
    this._evaluate(out.state, event instanceof Event ? event : new Event(event), null, out);
    return out;
  }

  /** Evaluates like `evaluate` and also returns every guard tried, in order. */
  explain(state, event) {
    const out = new Outcome();
    const before = state instanceof SessionState ? state.copy() : new SessionState(state);
    out.state = before.copy();
    const steps = [];
    this._evaluate(out.state, event instanceof Event ? event : new Event(event), steps, out, before);
    return { outcome: out, steps };
  }

  /** The transition with id `id` as the document writes it, or null. */
  transition(id) {
    const t = this._transitions[id];
    if (t === undefined) return null;
    return JSON.parse(canonicalText(documentValue({ ...this._model, transitions: [t] }).transitions[0]));
  }

  _evaluate(s, e, trace, out, before) {
    const si = STATE_INDEX[s.state];
    const ei = EVENT_INDEX[e.kind];
    if (si === undefined) throw refuse('invalid-value', `\`state\` cannot be \`${s.state}\``, null, null, 'state');
    if (ei === undefined) throw refuse('invalid-value', `\`type\` cannot be \`${e.kind}\``, null, null, 'type');
    if (typeof e.time !== 'number' || !(e.time >= EARLIEST && e.time <= LATEST)) throw refuse('invalid-time', 'the event has no valid `time`', null, null, 'time');
    const problem = missingFact(e) || (hasAttributes(e) ? this._attributeProblem(e) : null);
    if (problem !== null) {
      const mode = s.authMode;
      if (si !== 0) s.state = 'awaiting_idp';
      if (trace !== null) {
        trace.push({ transition: -1, check: 'the event has every fact it needs', facts: problem, matched: false, levers: ['built-in'], location: null });
      }
      let notices = 0;
      if (e.network === 'offline') notices |= N_NETWORK_REQUIRED;
      if (s.readOnly) notices |= N_READ_ONLY;
      out.decision = 'idp_login';
      out.reason = 'invalid_event';
      out.message = 'the event is incomplete: ' + problem;
      out._notices = notices;
      out.notices = NOTICE_LISTS[notices];
      out.authMode = mode;
      out.transition = -1;
      return;
    }
    const highest = highestSeen(s);
    const now = highest !== null && highest > e.time ? highest : e.time;
    const k = (si * EVENTS.length + ei) * 2;
    const end = this._table[k + 1];
    const guards = this._guards;
    for (let i = this._table[k]; i < end; i++) {
      const holds = this._holds(guards[i], s, e, now, highest);
      if (trace !== null) {
        const t = this._transitions[i];
        trace.push({
          transition: t.id,
          check: describeGuard(t.guard, this._rules),
          facts: guardFacts(this, t.guard, before, e),
          matched: holds,
          levers: [...t.levers],
          location: t.location === null ? null : { file: this.source !== null ? this.source : this._file, line: t.location.line, column: t.location.column },
        });
      }
      if (holds) {
        this._apply(i, s, e, now, highest, out);
        return;
      }
    }
    // Unreachable for a machine the reader accepted (every group ends in `always`); fail closed anyway.
    out.decision = 'idp_login';
    out.reason = 'unexpected_event';
    out.message = MESSAGE_UNEXPECTED_EVENT;
    out.authMode = s.authMode;
    out.transition = -1;
  }

  /** An attribute the event reports that the policy does not declare, or a value of the wrong type. */
  _attributeProblem(e) {
    // The first problem in the order of the attributes' names by their UTF-8 bytes, as Swift.
    let first = null;
    let problem = null;
    for (const name of Object.keys(e.attributes)) {
      if (first !== null && compareUTF8(name, first) >= 0) continue;
      const value = e.attributes[name];
      const declared = this._attributes.find((a) => sameText(a.name, name));
      if (declared === undefined) {
        first = name;
        problem = `attribute \`${name}\` is not declared by the policy`;
      } else if (!typeAccepts(declared.type, value)) {
        first = name;
        problem = `attribute \`${name}\` cannot be \`${value}\`: it is ${typeName(declared.type)}`;
      }
    }
    return problem;
  }

  /** Whether guard `g` holds (`StateMachine.holds`). */
  _holds(g, s, e, now, highest) {
    switch (g.code) {
      case 0: return true;
      case 1: return e.device.integrity === 'compromised';
      case 2: return highest !== null && e.time < highest - g.ms;
      case 3: {
        const a = e.user;
        const b = s.user;
        return a !== null && b !== null && !sameText(a, b);
      }
      case 4: {
        const a = e.device.id;
        const b = s.device;
        return a !== null && b !== null && !sameText(a, b);
      }
      case 5: {
        const r = s.lastIdPLogin;
        return r === null || now - r > g.ms;
      }
      case 6: {
        const r = s.lastActivity !== null ? s.lastActivity : s.lastIdPLogin;
        return r === null || now - r > g.ms;
      }
      case 7: {
        const r = s.lastOnline !== null ? s.lastOnline : s.lastIdPLogin;
        return r === null || now - r > g.ms;
      }
      case 8: return s.authMode === null;
      case 9: {
        const m = s.authMode;
        return m === null || m === 'password' || m === 'pin';
      }
      case 10: {
        const m = s.authMode;
        return m === null || !g.modes.includes(m);
      }
      case 11: return e.device.keystore !== 'hardware';
      case 12:
        // A biometric session's attempt, a prompt, or an adoption (which would ask for a prompt).
        return s.biometricLocked && (s.authMode === 'biometric' || e.kind === 'biometric_succeeded' || e.kind === 'device_session_detected');
      case 13: return s.authMode === g.w;
      case 14: {
        const f = s.failures;
        const count = g.w === 'biometric' ? f.biometric : g.w === 'offline_login' ? f.offlineLogin : f.idpLogin;
        return count >= g.n - 1;
      }
      case 15: return e.network === 'offline';
      case 16: return e.cause === g.w;
      case 17: return e.unsyncedItems !== null && e.unsyncedItems > 0;
      case 18: return e.appID === null || !containsText(this._trusted, e.appID);
      case 19: return typeof truth(this._rules[g.n].condition, s, e, now) === 'string';
      case 20: return truth(this._rules[g.n].condition, s, e, now) === YES;
      default:
        return this._holds(g.trigger, s, e, now, highest) && this._holds(g.inner, cleared(highest, s.biometricLocked), e, now, highest);
    }
  }

  /** Applies transition `i`'s action to `s` in place and writes the outcome (`StateMachine.apply`). */
  _apply(i, s, e, now, highest, out) {
    const a = this._actions[i];
    const previousMode = s.authMode;
    const fx = a.effects;
    s.highestTime = highest !== null && highest > e.time ? highest : e.time;
    if (fx !== 0) {
      if (fx & FX_CLEAR) {
        const h = s.highestTime;
        s.state = 'signed_out';
        s.user = null;
        s.device = null;
        s.authMode = null;
        s.lastIdPLogin = null;
        s.lastOnline = null;
        s.lastActivity = null;
        s.failures = failuresOf();
        s.readOnly = false;
        // The biometric lock is the device's: a wipe keeps it, like the highest time seen.
        s.highestTime = h;
      }
      if (fx & FX_ESTABLISH) {
        if (e.user !== null) s.user = e.user;
        if (e.device.id !== null) s.device = e.device.id;
        // An adopted session's mode is the policy's, never the event's.
        s.authMode = fx & FX_ADOPT ? 'biometric' : e.kind === 'device_session_detected' ? 'none' : e.authMode !== null ? e.authMode : 'none';
        s.lastIdPLogin = e.time;
        s.lastOnline = e.time;
        s.lastActivity = e.time;
        s.highestTime = e.time;
        s.failures = failuresOf();
        s.readOnly = false;
        // Only an IdP login unlocks the biometric path; an adopted device session does not.
        if (e.kind === 'idp_login_succeeded') s.biometricLocked = false;
      }
      if (fx & FX_RECORD_ONLINE) {
        s.lastOnline = e.time;
        s.failures.offlineLogin = 0;
      }
      if (fx & FX_RECORD_ACTIVITY) s.lastActivity = now;
      if (fx & FX_COUNT_BIOMETRIC) s.failures.biometric = increment(s.failures.biometric);
      if (fx & FX_COUNT_OFFLINE) s.failures.offlineLogin = increment(s.failures.offlineLogin);
      if (fx & FX_COUNT_IDP) s.failures.idpLogin = increment(s.failures.idpLogin);
      if (fx & FX_RESET_BIOMETRIC) s.failures.biometric = 0;
      if (fx & FX_LOCK_BIOMETRIC) s.biometricLocked = true;
      if (fx & FX_SET_READ_ONLY) s.readOnly = true;
    }
    if (a.target >= 0) s.state = a.targetState;
    else if (a.target === -1) s.state = s.readOnly ? 'read_only' : 'active';
    let notices = a.notices;
    if (a.needsNetwork && e.network === 'offline') notices |= N_NETWORK_REQUIRED;
    if (s.readOnly) notices |= N_READ_ONLY;
    out.decision = a.decision;
    out.reason = a.reason;
    out.message = a.message;
    out._notices = notices;
    out.notices = NOTICE_LISTS[notices];
    if (a.namesScope) {
      const hardware = e.device.keystore === 'hardware';
      const sc = this._scopes;
      out.scope = s.authMode === 'biometric' ? (hardware ? sc.biometricHardware : sc.biometric) : hardware ? sc.noneHardware : sc.none;
    }
    out.authMode = a.usesPreviousAuthMode && a.isIdpLogin ? previousMode : null;
    out.noticeDelay = a.noticeDelay;
    out.transition = i;
  }
}

/** The fact an event of its kind must carry but does not, described; or null. */
function missingFact(e) {
  const facts = REQUIRED_FACTS[e.kind];
  if (facts === undefined) return null;
  for (let i = 0; i < facts.length; i++) {
    if (e[facts[i][1]] === null || e[facts[i][1]] === undefined) return `\`${e.kind}\` needs \`${facts[i][0]}\``;
  }
  return null;
}
