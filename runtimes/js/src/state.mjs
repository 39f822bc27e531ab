// `SessionState` and `Event`: the values evaluated, their constructors and their JSON.

import { SessionPolicyError, diagnostic, refuse } from './errors.mjs';
import { FieldReader } from './fields.mjs';
import { readRoot } from './json.mjs';
import { INT64_MAX, compareUTF8, exact, isSpaceOrNewline, quote } from './text.mjs';
import { EARLIEST, LATEST, Timestamp } from './time.mjs';
import { AUTH_MODES, CAUSES, EVENTS, INTEGRITIES, KEYSTORES, NETWORKS, STATES, word } from './vocabulary.mjs';

/** Consecutive failures per path. Counts are numbers (BigInts past 2^53, as Swift's Int allows). */
function failuresOf(biometric = 0, offlineLogin = 0, idpLogin = 0) {
  return { biometric, offlineLogin, idpLogin };
}

/** A time given to a constructor: milliseconds, an RFC 3339 string or a Date; null if absent. */
function timeArgument(v, what) {
  if (v === undefined || v === null) return null;
  if (typeof v === 'number' && Number.isInteger(v) && v >= EARLIEST && v <= LATEST) return v;
  if (typeof v === 'string') {
    const t = Timestamp.parse(v);
    if (t !== null) return t;
  }
  if (v instanceof Date && Number.isInteger(v.getTime())) return timeArgument(v.getTime(), what);
  throw refuse('invalid-time', `\`${what}\` must be a time (milliseconds or RFC 3339), found \`${String(v)}\``, null, null, what);
}

function wordArgument(list, v, what, optional) {
  if ((v === undefined || v === null) && optional) return null;
  const w = typeof v === 'string' ? word(list, v) : undefined;
  if (w === undefined) throw refuse('invalid-value', `\`${what}\` cannot be \`${String(v)}\``, null, `one of ${list.join(', ')}`, what);
  return w;
}

function nameArgument(v, what) {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw refuse('wrong-type', `\`${what}\` must be a string`, null, null, what);
  if (!isName(v)) throw refuse('invalid-value', `\`${what}\` must be a non-empty name without surrounding spaces`, null, null, what);
  return v;
}

function countArgument(v, what) {
  if (v === undefined || v === null) return 0;
  if ((typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) || (typeof v === 'bigint' && v >= 0n && v <= INT64_MAX)) {
    return typeof v === 'bigint' ? exact(v) : v;
  }
  throw refuse('invalid-value', `\`${what}\` must be a whole number, at least 0`, null, null, what);
}

/** A non-empty name without surrounding spaces (`SyntaxReader.name`). */
function isName(s) {
  return s.length > 0 && !isSpaceOrNewline(s.charCodeAt(0)) && !isSpaceOrNewline(s.charCodeAt(s.length - 1));
}

/**
 * The state of one user's session on one device: the small value the caller stores (Keychain,
 * Keystore, a database) and passes to every evaluation. Times are milliseconds since the epoch.
 */
export class SessionState {
  /**
   * A state; every field optional (a signed-out session with nothing known). Fields are
   * checked: an unknown state or auth mode, a time that is not one, a negative count throws.
   */
  constructor(init) {
    this.state = 'signed_out';
    this.user = null;
    this.device = null;
    this.authMode = null;
    this.lastIdPLogin = null;
    this.lastOnline = null;
    this.lastActivity = null;
    this.highestTime = null;
    this.failures = failuresOf();
    this.readOnly = false;
    this.biometricLocked = false;
    if (init === undefined || init === null) return;
    if (init.state !== undefined) this.state = wordArgument(STATES, init.state, 'state', false);
    this.user = nameArgument(init.user, 'user');
    this.device = nameArgument(init.device, 'device');
    this.authMode = wordArgument(AUTH_MODES, init.authMode, 'authMode', true);
    this.lastIdPLogin = timeArgument(init.lastIdPLogin, 'lastIdPLogin');
    this.lastOnline = timeArgument(init.lastOnline, 'lastOnline');
    this.lastActivity = timeArgument(init.lastActivity, 'lastActivity');
    this.highestTime = timeArgument(init.highestTime, 'highestTime');
    const f = init.failures || {};
    this.failures = failuresOf(
      countArgument(f.biometric, 'failures.biometric'),
      countArgument(f.offlineLogin, 'failures.offlineLogin'),
      countArgument(f.idpLogin, 'failures.idpLogin'),
    );
    this.readOnly = init.readOnly === true;
    this.biometricLocked = init.biometricLocked === true;
  }

  /** A signed-out session with nothing known. */
  static get signedOut() {
    return new SessionState();
  }

  /**
   * Reads a session state document (text, UTF-8 bytes or a parsed object) with the strict
   * reader: no unknown key, every value of its type, times RFC 3339, counts at least 0.
   * Throws `SessionPolicyError` (`unknown-key`, `missing-key`, `wrong-type`, `invalid-value`,
   * `invalid-time`, `invalid-json`, ...).
   */
  static fromJSON(input) {
    const root = readRoot(input, 'give a JSON object');
    const r = new FieldReader();
    const s = r.sessionState(root);
    if (s === null || r.diagnostics.length > 0) {
      throw new SessionPolicyError(r.diagnostics.length > 0 ? r.diagnostics : [diagnostic('invalid-value', 'the input is not valid', root)]);
    }
    return s;
  }

  /** A copy (a new `failures` too). */
  copy() {
    const c = new SessionState();
    c.state = this.state;
    c.user = this.user;
    c.device = this.device;
    c.authMode = this.authMode;
    c.lastIdPLogin = this.lastIdPLogin;
    c.lastOnline = this.lastOnline;
    c.lastActivity = this.lastActivity;
    c.highestTime = this.highestTime;
    const f = this.failures;
    c.failures = failuresOf(f.biometric, f.offlineLogin, f.idpLogin);
    c.readOnly = this.readOnly;
    c.biometricLocked = this.biometricLocked;
    return c;
  }

  /** The JSON text Swift writes for this state (absent values left out, keys in byte order). */
  toJSONString() {
    let out = '{';
    if (this.authMode !== null) out += '"auth_mode":' + quote(this.authMode) + ',';
    out += '"biometric_locked":' + (this.biometricLocked ? 'true' : 'false');
    if (this.device !== null) out += ',"device":' + quote(this.device);
    const f = this.failures;
    out += ',"failures":{"biometric":' + f.biometric + ',"idp_login":' + f.idpLogin + ',"offline_login":' + f.offlineLogin + '}';
    if (this.highestTime !== null) out += ',"highest_time":"' + Timestamp.format(this.highestTime) + '"';
    if (this.lastActivity !== null) out += ',"last_activity":"' + Timestamp.format(this.lastActivity) + '"';
    if (this.lastIdPLogin !== null) out += ',"last_idp_login":"' + Timestamp.format(this.lastIdPLogin) + '"';
    if (this.lastOnline !== null) out += ',"last_online":"' + Timestamp.format(this.lastOnline) + '"';
    out += ',"read_only":' + (this.readOnly ? 'true' : 'false');
    out += ',"state":' + quote(this.state);
    if (this.user !== null) out += ',"user":' + quote(this.user);
    return out + '}';
  }

  /** The JSON value of this state, members in Swift's order: `JSON.stringify` writes Swift's bytes. */
  toJSON() {
    const o = {};
    if (this.authMode !== null) o.auth_mode = this.authMode;
    o.biometric_locked = this.biometricLocked;
    if (this.device !== null) o.device = this.device;
    const f = this.failures;
    o.failures = { biometric: f.biometric, idp_login: f.idpLogin, offline_login: f.offlineLogin };
    if (this.highestTime !== null) o.highest_time = Timestamp.format(this.highestTime);
    if (this.lastActivity !== null) o.last_activity = Timestamp.format(this.lastActivity);
    if (this.lastIdPLogin !== null) o.last_idp_login = Timestamp.format(this.lastIdPLogin);
    if (this.lastOnline !== null) o.last_online = Timestamp.format(this.lastOnline);
    o.read_only = this.readOnly;
    o.state = this.state;
    if (this.user !== null) o.user = this.user;
    return o;
  }
}

// MARK: - Event

/**
 * Something that happened to a session, with its time (milliseconds since the epoch) and
 * context. `kind` is written `type` in JSON.
 */
export class Event {
  /**
   * An event: `{kind, time, network?, user?, device?: {id?, keystore?, integrity?}, authMode?,
   * cause?, unsyncedItems?, appID?, attributes?}` (`type` is accepted for `kind`). Values are
   * checked as the strict reader checks them; the facts a kind needs are not (an event
   * without them is decided `idp_login`, `invalid_event`).
   */
  constructor(init) {
    const i = init || {};
    this.kind = wordArgument(EVENTS, i.kind !== undefined ? i.kind : i.type, 'kind', false);
    this.time = timeArgument(i.time, 'time');
    if (this.time === null) throw refuse('missing-key', 'an event needs its `time`', null, null, 'time');
    this.network = wordArgument(NETWORKS, i.network, 'network', true);
    this.user = nameArgument(i.user, 'user');
    const d = i.device || {};
    this.device = {
      id: nameArgument(d.id, 'device.id'),
      keystore: wordArgument(KEYSTORES, d.keystore, 'device.keystore', true),
      integrity: wordArgument(INTEGRITIES, d.integrity, 'device.integrity', true),
    };
    this.authMode = wordArgument(AUTH_MODES, i.authMode, 'authMode', true);
    this.cause = wordArgument(CAUSES, i.cause, 'cause', true);
    this.unsyncedItems = i.unsyncedItems === undefined || i.unsyncedItems === null ? null : countArgument(i.unsyncedItems, 'unsyncedItems');
    this.appID = nameArgument(i.appID, 'appID');
    this.attributes = Object.create(null);
    if (i.attributes) {
      for (const k of Object.keys(i.attributes)) {
        const v = i.attributes[k];
        if (typeof v !== 'string') throw refuse('wrong-type', `\`attributes.${k}\` must be a string`, null, null, `attributes.${k}`);
        this.attributes[k] = v;
      }
    }
  }

  /**
   * Reads an event document (text, UTF-8 bytes or a parsed object) with the strict reader:
   * `type` and `time` required, no unknown key, the facts its kind needs (`launch` needs
   * `network`, ...). Throws `SessionPolicyError`.
   */
  static fromJSON(input) {
    const root = readRoot(input, 'give a JSON object');
    const r = new FieldReader();
    const e = r.event(root);
    if (e === null || r.diagnostics.length > 0) {
      throw new SessionPolicyError(r.diagnostics.length > 0 ? r.diagnostics : [diagnostic('invalid-value', 'the input is not valid', root)]);
    }
    return e;
  }

  /** The JSON text Swift's `JSONEncoder` (sorted keys) writes for this event. */
  toJSONString() {
    return JSON.stringify(this.toJSON());
  }

  /** The JSON value of this event, keys sorted, absent values left out. */
  toJSON() {
    const o = {};
    if (this.appID !== null) o.app_id = this.appID;
    const names = Object.keys(this.attributes);
    if (names.length > 0) {
      const a = {};
      for (const k of names.sort(compareUTF8)) a[k] = this.attributes[k];
      o.attributes = a;
    }
    if (this.authMode !== null) o.auth_mode = this.authMode;
    if (this.cause !== null) o.cause = this.cause;
    const d = this.device;
    if (d.id !== null || d.integrity !== null || d.keystore !== null) {
      const x = {};
      if (d.id !== null) x.id = d.id;
      if (d.integrity !== null) x.integrity = d.integrity;
      if (d.keystore !== null) x.keystore = d.keystore;
      o.device = x;
    }
    if (this.network !== null) o.network = this.network;
    o.time = Timestamp.format(this.time);
    o.type = this.kind;
    if (this.unsyncedItems !== null) o.unsynced_items = this.unsyncedItems;
    if (this.user !== null) o.user = this.user;
    return o;
  }
}

/** An event without validation (the strict reader's result). */
function blankEvent(kind, time) {
  const e = Object.create(Event.prototype);
  e.kind = kind;
  e.time = time;
  e.network = null;
  e.user = null;
  e.device = { id: null, keystore: null, integrity: null };
  e.authMode = null;
  e.cause = null;
  e.unsyncedItems = null;
  e.appID = null;
  e.attributes = Object.create(null);
  return e;
}

export { blankEvent, failuresOf, isName };
