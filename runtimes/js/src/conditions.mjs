// What the evaluator reads a machine into (`Action`) and the conditions' truth over a state
// and an event: times since, comparisons, attributes, facts.

import { C_AND, C_COMPARE, C_NOT, C_ONE_OF, C_OR, F_ATTRIBUTE } from './document.mjs';
import { SessionState } from './state.mjs';
import { containsText, parseInt64 } from './text.mjs';
import { TimeSpan, compareVersions, parseVersion } from './time.mjs';
import { STATE_INDEX } from './vocabulary.mjs';

/** An action as the evaluator reads it. */
class Action {
  constructor(a) {
    this.decision = a.decision;
    this.reason = a.reason;
    this.message = a.message;
    /** -1 resting, -2 unchanged, else the target state. */
    this.target = a.target === 'resting' ? -1 : a.target === 'unchanged' ? -2 : STATE_INDEX[a.target];
    this.targetState = this.target >= 0 ? a.target : null;
    this.effects = a.effects;
    this.notices = a.notices;
    this.namesScope = a.namesScope;
    this.usesPreviousAuthMode = a.usesPreviousAuthMode;
    this.noticeDelay = a.noticeDelay;
    /** `idp_login` or `wipe`: offline, the notice `network_required` is added. */
    this.needsNetwork = a.decision === 'idp_login' || a.decision === 'wipe';
    this.isIdpLogin = a.decision === 'idp_login';
  }
}

const YES = 1;
const NO = 0;

/** Milliseconds since `t`, or null. */
function since(now, t) {
  return t === null ? null : now - t;
}

function compare(a, cmp, b) {
  switch (cmp) {
    case 0: return a == b; // eslint-disable-line eqeqeq -- numbers and BigInts compared exactly
    case 1: return a != b; // eslint-disable-line eqeqeq
    case 2: return a < b;
    case 3: return a <= b;
    case 4: return a > b;
    default: return a >= b;
  }
}

/** The value of attribute `name` an event reports (names compared as `sameText` compares), or null. */
function attributeValue(e, name) {
  return Object.prototype.hasOwnProperty.call(e.attributes, name) ? e.attributes[name] : null;
}

function hasAttributes(e) {
  for (const _ in e.attributes) return true; // eslint-disable-line no-unused-vars
  return false;
}

/** The text value of a fact (`StateMachine.text`), or null. */
function factText(c, s, e) {
  switch (c.fact) {
    case F_ATTRIBUTE: return attributeValue(e, c.name);
    case 0: return e.kind;
    case 1: return s.state;
    case 2: return e.network;
    case 3: return s.authMode;
    case 4: return e.device.keystore;
    case 5: return e.device.integrity;
    case 12: return s.readOnly ? 'true' : 'false';
    default: return null;
  }
}

/** The number value of a fact (`StateMachine.number`), or null. */
function factNumber(c, s, e, now) {
  switch (c.fact) {
    case F_ATTRIBUTE: {
      const raw = attributeValue(e, c.name);
      if (raw === null) return null;
      const i = parseInt64(raw, false);
      if (i !== null) return i;
      const d = TimeSpan.parse(raw);
      return d === null ? null : d * 1000;
    }
    case 6: return since(now, s.lastIdPLogin);
    case 7: return since(now, s.lastOnline !== null ? s.lastOnline : s.lastIdPLogin);
    case 8: return since(now, s.lastActivity !== null ? s.lastActivity : s.lastIdPLogin);
    case 9: return s.failures.biometric;
    case 10: return s.failures.offlineLogin;
    case 11: return s.failures.idpLogin;
    default: return null;
  }
}

/** A condition's truth: YES, NO, or the name of the fact it lacks (unknown). */
function truth(c, s, e, now) {
  switch (c.op) {
    case C_AND: {
      const x = truth(c.left, s, e, now);
      if (x === NO) return NO;
      const y = truth(c.right, s, e, now);
      if (y === NO) return NO;
      return typeof x === 'string' ? x : y;
    }
    case C_OR: {
      const x = truth(c.left, s, e, now);
      if (x === YES) return YES;
      const y = truth(c.right, s, e, now);
      if (y === YES) return YES;
      return typeof x === 'string' ? x : y;
    }
    case C_NOT: {
      const x = truth(c.left, s, e, now);
      return x === YES ? NO : x === NO ? YES : x;
    }
    case C_ONE_OF: {
      const v = factText(c, s, e);
      if (v === null) return c.name;
      return containsText(c.values, v) !== c.negated ? YES : NO;
    }
    case C_COMPARE: {
      const v = factNumber(c, s, e, now);
      if (v === null) return c.name;
      return compare(v, c.cmp, c.value) ? YES : NO;
    }
    default: {
      const raw = factText(c, s, e);
      if (raw === null) return c.name;
      const v = parseVersion(raw);
      if (v === null) return c.name;
      const order = compareVersions(v, c.value);
      return compare(order, c.cmp, 0) ? YES : NO;
    }
  }
}

function typeName(t) {
  switch (t.kind) {
    case 'words': return 'one of ' + t.words.map((w) => '`' + w + '`').join(', ');
    case 'version': return 'a version';
    case 'boolean': return '`true` or `false`';
    case 'integer': return 'an integer';
    case 'duration': return 'a duration';
    default: return 'a string';
  }
}

function typeAccepts(t, raw) {
  switch (t.kind) {
    case 'words': return containsText(t.words, raw);
    case 'version': return parseVersion(raw) !== null;
    case 'boolean': return raw === 'true' || raw === 'false';
    case 'integer': return parseInt64(raw, false) !== null;
    case 'duration': return TimeSpan.parse(raw) !== null;
    default: return true;
  }
}

/** The highest time a state has seen (`StateMachine.highestSeen`), or null. */
function highestSeen(s) {
  let h = s.highestTime;
  let t = s.lastIdPLogin;
  if (t !== null && (h === null || t > h)) h = t;
  t = s.lastOnline;
  if (t !== null && (h === null || t > h)) h = t;
  t = s.lastActivity;
  if (t !== null && (h === null || t > h)) h = t;
  return h;
}

/**
 * The session as a wipe leaves it: signed out, keeping only the highest time seen and the
 * device's biometric lock.
 */
function cleared(highest, locked) {
  const c = new SessionState();
  c.highestTime = highest;
  c.biometricLocked = locked;
  return c;
}

export { Action, NO, YES, cleared, hasAttributes, highestSeen, truth, typeAccepts, typeName };
