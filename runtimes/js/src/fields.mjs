// The strict reader of states and events (SessionSyntax.swift, SyntaxReader.swift): every
// problem collected as a diagnostic, in the order Swift finds them.

import { diagnostic } from './errors.mjs';
import { MAPPING, SCALAR } from './json.mjs';
import { SessionState, blankEvent, failuresOf, isName } from './state.mjs';
import { parseInt64 } from './text.mjs';
import { Timestamp } from './time.mjs';
import { AUTH_MODES, CAUSES, EVENTS, INTEGRITIES, KEYSTORES, NETWORKS, NO_FACTS, REQUIRED_FACTS, STATES, word } from './vocabulary.mjs';

const STATE_KEYS = ['state', 'user', 'device', 'auth_mode', 'last_idp_login', 'last_online', 'last_activity', 'highest_time', 'failures', 'read_only', 'biometric_locked'];
const FAILURE_KEYS = ['biometric', 'offline_login', 'idp_login'];
const EVENT_KEYS = ['type', 'time', 'network', 'user', 'device', 'auth_mode', 'cause', 'unsynced_items', 'attributes', 'app_id'];
const DEVICE_KEYS = ['id', 'keystore', 'integrity'];

/** Collects a diagnostic for every problem, in the order the Swift reader finds them. */
class FieldReader {
  constructor() {
    this.diagnostics = [];
  }

  error(code, message, node, path, help) {
    this.diagnostics.push(diagnostic(code, message, node, help, path));
  }

  /** A mapping's fields (`{node, path, get}`), reporting keys not in `allowed`; null if not a mapping. */
  fields(node, path, allowed) {
    if (node.kind !== MAPPING) {
      this.error('wrong-type', `${path === '' ? 'the document' : '`' + path + '`'} must be a mapping, found ${node.shapeName}`, node, path);
      return null;
    }
    for (const [key] of node.items) {
      if (!allowed.includes(key.text)) {
        this.error('unknown-key', `unknown key \`${key.text}\` ${path === '' ? 'at the top level' : 'in `' + path + '`'}`, key, join(path, key.text), closestHelp(key.text, allowed));
      }
    }
    return { node, path };
  }

  require(f, key, help) {
    const v = f.node.get(key);
    if (v !== undefined) return v;
    this.error('missing-key', `missing key \`${key}\` ${f.path === '' ? 'at the top level' : 'in `' + f.path + '`'}`, f.node, join(f.path, key), help);
    return undefined;
  }

  scalarText(node, path, expected) {
    if (node.kind !== SCALAR || node.isNull) {
      this.error('wrong-type', `\`${path}\` must be ${expected}, found ${node.shapeName}`, node, path);
      return null;
    }
    return node.text;
  }

  string(node, path) {
    return this.scalarText(node, path, 'a string');
  }

  name(node, path) {
    // An unquoted literal (`true`, `false`, a number) is not a name (`SyntaxReader.name`).
    if (node.kind === SCALAR && node.plain && !node.isNull) {
      this.error('wrong-type', `\`${path}\` must be a string, found \`${node.text}\``, node, path);
      return null;
    }
    const s = this.string(node, path);
    if (s === null) return null;
    if (!isName(s)) {
      this.error('invalid-value', `\`${path}\` must be a non-empty name without surrounding spaces`, node, path);
      return null;
    }
    return s;
  }

  int(node, path) {
    const text = this.scalarText(node, path, 'an integer');
    if (text === null) return null;
    const v = node.plain ? parseInt64(text, false) : null;
    if (v === null) {
      this.error('wrong-type', `\`${path}\` must be an integer, found ${node.plain ? '`' + text + '`' : 'a string, `"' + text + '"`'}`, node, path);
      return null;
    }
    return v;
  }

  bool(node, path) {
    const text = this.scalarText(node, path, '`true` or `false`');
    if (text === null) return null;
    if (node.plain && (text === 'true' || text === 'True' || text === 'TRUE')) return true;
    if (node.plain && (text === 'false' || text === 'False' || text === 'FALSE')) return false;
    this.error('wrong-type', `\`${path}\` must be \`true\` or \`false\`, found ${node.plain ? '`' + text + '`' : 'a string, `"' + text + '"`'}`, node, path);
    return null;
  }

  time(node, path) {
    const text = this.scalarText(node, path, 'a time such as `2026-03-01T09:00:00Z`');
    if (text === null) return null;
    if (text.startsWith('+') || text.startsWith('-')) {
      this.error('invalid-time', `\`${path}\` must be an absolute time, found \`${text}\``, node, path, 'write an RFC 3339 time such as `2026-03-01T09:00:00Z`');
      return null;
    }
    const t = Timestamp.parse(text);
    if (t === null) {
      this.error('invalid-time', `\`${text}\` is not a valid time`, node, path, 'write an RFC 3339 time such as `2026-03-01T09:00:00Z`');
      return null;
    }
    return t;
  }

  keyword(node, path, list) {
    const options = [...list].sort();
    const text = this.scalarText(node, path, 'one of ' + options.map((o) => '`' + o + '`').join(', '));
    if (text === null) return null;
    const w = word(list, text);
    if (w === undefined) {
      this.error('invalid-value', `\`${path}\` cannot be \`${text}\``, node, path, closestHelp(text, options));
      return null;
    }
    return w;
  }

  sessionState(node) {
    const f = this.fields(node, '', STATE_KEYS);
    if (f === null) return null;
    const before = this.diagnostics.length;
    const s = new SessionState();
    const v = this.require(f, 'state', 'name the machine state, for example `state: active`');
    if (v !== undefined) s.state = this.keyword(v, 'state', STATES) || 'signed_out';
    let x;
    if ((x = node.get('user')) !== undefined) s.user = this.name(x, 'user');
    if ((x = node.get('device')) !== undefined) s.device = this.name(x, 'device');
    if ((x = node.get('auth_mode')) !== undefined) s.authMode = this.keyword(x, 'auth_mode', AUTH_MODES);
    if ((x = node.get('last_idp_login')) !== undefined) s.lastIdPLogin = this.time(x, 'last_idp_login');
    if ((x = node.get('last_online')) !== undefined) s.lastOnline = this.time(x, 'last_online');
    if ((x = node.get('last_activity')) !== undefined) s.lastActivity = this.time(x, 'last_activity');
    if ((x = node.get('highest_time')) !== undefined) s.highestTime = this.time(x, 'highest_time');
    if ((x = node.get('read_only')) !== undefined) s.readOnly = this.bool(x, 'read_only') || false;
    if ((x = node.get('biometric_locked')) !== undefined) s.biometricLocked = this.bool(x, 'biometric_locked') || false;
    if ((x = node.get('failures')) !== undefined) {
      const ff = this.fields(x, 'failures', FAILURE_KEYS);
      if (ff !== null) {
        const count = (key) => {
          const n = x.get(key);
          if (n === undefined) return 0;
          const c = this.int(n, 'failures.' + key);
          if (c === null) return 0;
          if (c < 0) {
            this.error('invalid-value', `\`failures.${key}\` cannot be negative`, n, 'failures.' + key);
            return 0;
          }
          return c;
        };
        s.failures = failuresOf(count('biometric'), count('offline_login'), count('idp_login'));
      }
    }
    return this.diagnostics.length === before ? s : null;
  }

  event(node) {
    const f = this.fields(node, '', EVENT_KEYS);
    if (f === null) return null;
    const before = this.diagnostics.length;
    const kn = this.require(f, 'type', 'name the event, for example `type: launch`');
    const kind = kn === undefined ? null : this.keyword(kn, 'type', EVENTS);
    const tn = this.require(f, 'time', 'every event carries its time, for example `time: 2026-03-01T09:00:00Z`');
    const time = tn === undefined ? null : this.time(tn, 'time');
    if (kind === null || time === null) return null;
    const e = blankEvent(kind, time);
    let x;
    if ((x = node.get('network')) !== undefined) e.network = this.keyword(x, 'network', NETWORKS);
    if ((x = node.get('user')) !== undefined) e.user = this.name(x, 'user');
    if ((x = node.get('auth_mode')) !== undefined) e.authMode = this.keyword(x, 'auth_mode', AUTH_MODES);
    if ((x = node.get('cause')) !== undefined) e.cause = this.keyword(x, 'cause', CAUSES);
    if ((x = node.get('unsynced_items')) !== undefined) {
      const n = this.int(x, 'unsynced_items');
      if (n !== null) {
        if (n < 0) this.error('invalid-value', '`unsynced_items` cannot be negative', x, 'unsynced_items');
        else e.unsyncedItems = n;
      }
    }
    if ((x = node.get('app_id')) !== undefined) e.appID = this.name(x, 'app_id');
    if ((x = node.get('attributes')) !== undefined) {
      if (x.kind === MAPPING) {
        for (const [key, value] of x.items) {
          const text = this.string(value, 'attributes.' + key.text);
          if (text !== null) e.attributes[key.text] = text;
        }
      } else {
        this.error('wrong-type', `\`attributes\` must be a mapping, found ${x.shapeName}`, x, 'attributes', 'write `attributes: { license: revoked }`');
      }
    }
    if ((x = node.get('device')) !== undefined) {
      const d = this.fields(x, 'device', DEVICE_KEYS);
      if (d !== null) {
        let y;
        if ((y = x.get('id')) !== undefined) e.device.id = this.name(y, 'device.id');
        if ((y = x.get('keystore')) !== undefined) e.device.keystore = this.keyword(y, 'device.keystore', KEYSTORES);
        if ((y = x.get('integrity')) !== undefined) e.device.integrity = this.keyword(y, 'device.integrity', INTEGRITIES);
      }
    }
    for (const [key, field] of REQUIRED_FACTS[kind] || NO_FACTS) {
      if (e[field] === null && node.get(key) === undefined) {
        this.error('missing-key', `event \`${kind}\` needs \`${key}\``, node, key);
      }
    }
    return this.diagnostics.length === before ? e : null;
  }
}

function join(path, key) {
  return path === '' ? key : path + '.' + key;
}

/** "did you mean `x`?" for the closest of `options` (edit distance at most 2), else the options. */
function closestHelp(text, options) {
  let best = null;
  let bestDistance = 3;
  for (const o of options) {
    const d = editDistance(text, o);
    if (d < bestDistance) {
      best = o;
      bestDistance = d;
    }
  }
  return best !== null ? `did you mean \`${best}\`?` : 'one of ' + options.map((o) => '`' + o + '`').join(', ');
}

function editDistance(a, b) {
  if (Math.abs(a.length - b.length) > 2) return 3;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length];
}

export { FieldReader, closestHelp };
