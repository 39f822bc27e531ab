// The machine document reader (docs/machine-format.md): guards, conditions, rules, attributes
// and transitions read and checked (`DocumentReader`), and written back for the digest.

import { refuse } from './errors.mjs';
import { closestHelp } from './fields.mjs';
import { MAPPING, SCALAR, SEQUENCE, canonicalText } from './json.mjs';
import { sha256Hex } from './sha256.mjs';
import { parseInt64, sameText } from './text.mjs';
import { MAX_SPAN_SECONDS, parseVersion } from './time.mjs';
import { AUTH_MODES, CAUSES, COMPARISONS, DECISIONS, EFFECTS, EVENTS, EVENT_INDEX, FAILURE_PATHS, NOTICES, SCOPES, STATES, STATE_INDEX, SWITCHES, word } from './vocabulary.mjs';

/** The machine document format this runtime reads. */
export const FORMAT = 'sessionpolicy-machine/1';
// Guard kinds, as small integers for the evaluator's switch.
const G = {
  always: 0, device_compromised: 1, clock_rolled_back: 2, different_user: 3, different_device: 4,
  session_max_exceeded: 5, idle_exceeded: 6, offline_window_exceeded: 7, auth_mode_missing: 8,
  auth_mode_needs_idp: 9, auth_mode_not_offline: 10, keystore_not_hardware: 11, biometric_locked: 12,
  auth_mode_is: 13, failure_limit_reached: 14, network_offline: 15, refresh_cause: 16, unsynced_items: 17,
  app_not_trusted: 18, rule_fact_missing: 19, rule: 20, switched: 21,
};

/** A guard as the evaluator reads it: one shape for every kind. */
class Guard {
  constructor(kind, code) {
    /** The document's `kind`. */
    this.kind = kind;
    this.code = code;
    /** Seconds (`limit_seconds`, `tolerance_seconds`), the limit of `failure_limit_reached`, or a rule index. */
    this.n = 0;
    /** `n` seconds in milliseconds. */
    this.ms = 0;
    /** A word: `mode`, `cause`, `path`, `switch`. */
    this.w = null;
    /** `auth_mode_not_offline`'s modes, in the engine's order. */
    this.modes = null;
    /** `switched`'s trigger and inner guard. */
    this.trigger = null;
    this.inner = null;
  }
}

// Condition ops and facts.
const C_ONE_OF = 0, C_COMPARE = 1, C_VERSION = 2, C_AND = 3, C_OR = 4, C_NOT = 5;
/** The condition ops by their code above. */
const CONDITION_OPS = ['one_of', 'compare', 'compare_version', 'and', 'or', 'not'];
/** The attribute types' kinds. */
const ATTRIBUTE_TYPES = ['words', 'version', 'boolean', 'integer', 'duration', 'string'];
/**
 * Every code a machine document can be refused with (docs/machine-format.md, "What the reader
 * refuses"): the JSON reader's, then the document reader's. test/vocabulary.test.mjs holds it
 * against spec/vocabulary.json and against the codes json.mjs and this module write.
 */
const DOCUMENT_CODES = [
  'invalid-json', 'invalid-utf8', 'unsupported-encoding', 'input-too-large', 'nesting-too-deep', 'too-many-nodes',
  'duplicate-key', 'empty-document', 'wrong-type', 'missing-key', 'unknown-key', 'invalid-value', 'unsupported-format',
  'digest-mismatch', 'inconsistent-machine',
];
const FACTS = [
  'event', 'state', 'network', 'auth_mode', 'device.keystore', 'device.integrity', 'elapsed.since_idp_login',
  'elapsed.since_online', 'elapsed.since_activity', 'failures.biometric', 'failures.offline_login',
  'failures.idp_login', 'read_only',
];
const F_ATTRIBUTE = -1;

/** A rule condition as the evaluator reads it. */
class Condition {
  constructor(op) {
    this.op = op;
    /** The fact's index in `FACTS`, or `F_ATTRIBUTE`. */
    this.fact = 0;
    /** The fact's or attribute's name. */
    this.name = '';
    this.values = null;
    this.negated = false;
    /** Comparison index in `COMPARISONS`. */
    this.cmp = 0;
    /** The integer or the version (parts) compared with. */
    this.value = null;
    this.left = null;
    this.right = null;
  }
}

/** Reads a guard (`MachineDocument+Reading.swift`, `guardValue`). */
function readGuard(r, n, rules) {
  const kindNode = n.kind === MAPPING ? n.get('kind') : undefined;
  if (kindNode === undefined) throw r.fail(n, 'wrong-type', 'a guard must be an object with a `kind`');
  const kind = r.string(kindNode, "a guard's `kind`");
  const only = (keys) => r.object(n, `guard \`${kind}\``, ['kind', ...keys]);
  const code = G[kind];
  if (code === undefined || typeof code !== 'number' || !Object.prototype.hasOwnProperty.call(G, kind)) {
    throw r.fail(kindNode, 'invalid-value', `unknown guard \`${kind}\``, `this engine reads the guards of \`${FORMAT}\` (docs/machine-format.md)`);
  }
  const g = new Guard(kind, code);
  const span = (key) => {
    const s = r.seconds(only([key])[key], `\`${key}\``);
    g.n = s;
    g.ms = Number(s) * 1000;
  };
  const ruleIndex = () => {
    const node = only(['rule']).rule;
    const i = r.int(node, '`rule`');
    if (i < 0 || i >= rules) throw r.fail(node, 'inconsistent-machine', `guard \`${kind}\` names rule ${i}, which does not exist`);
    g.n = Number(i);
  };
  switch (code) {
    case G.clock_rolled_back: span('tolerance_seconds'); break;
    case G.session_max_exceeded:
    case G.idle_exceeded:
    case G.offline_window_exceeded: span('limit_seconds'); break;
    case G.auth_mode_not_offline: {
      const modes = r.array(only(['modes']).modes, '`modes`').map((m) => r.keyword(m, 'auth mode', AUTH_MODES));
      g.modes = AUTH_MODES.filter((m) => modes.includes(m));
      break;
    }
    case G.auth_mode_is: g.w = r.keyword(only(['mode']).mode, 'auth mode', AUTH_MODES); break;
    case G.failure_limit_reached: {
      const o = only(['path', 'limit']);
      const path = r.string(o.path, '`path`');
      g.w = word(FAILURE_PATHS, path);
      if (g.w === undefined) throw r.fail(o.path, 'invalid-value', `unknown failure path \`${path}\``);
      const limit = r.int(o.limit, '`limit`');
      if (limit < 1 || limit > 2147483647) throw r.fail(o.limit, 'invalid-value', '`limit` must be at least 1');
      g.n = Number(limit);
      break;
    }
    case G.refresh_cause: g.w = r.keyword(only(['cause']).cause, 'refresh failure cause', CAUSES); break;
    case G.rule_fact_missing:
    case G.rule: ruleIndex(); break;
    case G.switched: {
      const o = only(['switch', 'inner']);
      const name = r.string(o.switch, '`switch`');
      g.w = word(SWITCHES, name);
      if (g.w === undefined) throw r.fail(o.switch, 'invalid-value', `unknown switch \`${name}\``);
      g.trigger = new Guard(g.w, g.w === 'different_user' ? G.different_user : G.different_device);
      g.inner = readGuard(r, o.inner, rules);
      if (g.inner.code === G.switched) throw r.fail(o.inner, 'inconsistent-machine', 'a switched guard cannot hold another');
      break;
    }
    default: only([]);
  }
  return g;
}

/** The document value of a guard (`MachineDocument.guardValue`). */
function guardValue(g) {
  const o = { kind: g.kind };
  switch (g.code) {
    case G.clock_rolled_back: o.tolerance_seconds = g.n; break;
    case G.session_max_exceeded:
    case G.idle_exceeded:
    case G.offline_window_exceeded: o.limit_seconds = g.n; break;
    case G.auth_mode_not_offline: o.modes = g.modes; break;
    case G.auth_mode_is: o.mode = g.w; break;
    case G.failure_limit_reached: o.path = g.w; o.limit = g.n; break;
    case G.refresh_cause: o.cause = g.w; break;
    case G.rule_fact_missing:
    case G.rule: o.rule = g.n; break;
    case G.switched: o.switch = g.w; o.inner = guardValue(g.inner); break;
  }
  return o;
}

/** Reads the machine document's members, throwing the first problem (`MachineDocument.Reader`). */
class DocumentReader {
  constructor(file) {
    this.file = file;
  }

  fail(node, code, message, help) {
    return refuse(code, message, node, help);
  }

  /** The members of an object with exactly `keys` (every one required). */
  object(n, what, keys) {
    if (n.kind !== MAPPING) throw this.fail(n, 'wrong-type', `${what} must be an object, found ${n.shapeName}`);
    const out = Object.create(null);
    for (const [k, v] of n.items) {
      if (!keys.includes(k.text)) throw this.fail(k, 'unknown-key', `unknown key \`${k.text}\` in ${what}`, closestHelp(k.text, keys));
      out[k.text] = v;
    }
    for (const k of keys) {
      if (out[k] === undefined) throw this.fail(n, 'missing-key', `${what} has no \`${k}\``, `every key of ${what} is written, \`null\` where it has no value`);
    }
    return out;
  }

  string(n, what) {
    if (n.kind !== SCALAR || n.plain) throw this.fail(n, 'wrong-type', `${what} must be a string, found ${n.shapeName}`);
    return n.text;
  }

  optionalString(n, what) {
    return n.isNull ? null : this.string(n, what);
  }

  int(n, what) {
    const v = n.kind === SCALAR && n.plain ? parseInt64(n.text, false) : null;
    if (v === null) throw this.fail(n, 'wrong-type', `${what} must be an integer, found ${n.shapeName === 'a scalar' ? '`' + n.text + '`' : n.shapeName}`);
    return v;
  }

  nonNegative(n, what) {
    const v = this.int(n, what);
    if (v < 0) throw this.fail(n, 'invalid-value', `${what} cannot be negative`);
    return v;
  }

  /** A duration in seconds: not negative and at most 36,600 days, as a policy's are. */
  seconds(n, what) {
    const v = this.nonNegative(n, what);
    if (v > MAX_SPAN_SECONDS) {
      throw this.fail(n, 'invalid-value', `${what} is ${v} seconds, more than the longest duration a policy may set (36600 days)`);
    }
    return v;
  }

  bool(n, what) {
    if (n.kind !== SCALAR || !n.plain || (n.text !== 'true' && n.text !== 'false')) throw this.fail(n, 'wrong-type', `${what} must be \`true\` or \`false\``);
    return n.text === 'true';
  }

  array(n, what) {
    if (n.kind !== SEQUENCE) throw this.fail(n, 'wrong-type', `${what} must be a list, found ${n.shapeName}`);
    return n.items;
  }

  keyword(n, what, list) {
    const s = this.string(n, what);
    const w = word(list, s);
    if (w === undefined) throw this.fail(n, 'invalid-value', `unknown ${what} \`${s}\``, closestHelp(s, list));
    return w;
  }

  /** The canonical value of a node: strings as written, integers as BigInts; no other number. */
  canonical(n) {
    if (n.kind === SCALAR) {
      if (!n.plain) return n.text;
      if (n.text === 'null') return null;
      if (n.text === 'true') return true;
      if (n.text === 'false') return false;
      const v = parseInt64(n.text, false);
      if (v === null) throw this.fail(n, 'invalid-value', `\`${n.text}\` is not an integer; a machine document holds integers only`);
      return v;
    }
    if (n.kind === SEQUENCE) return n.items.map((x) => this.canonical(x));
    const out = Object.create(null);
    for (const [k, v] of n.items) out[k.text] = this.canonical(v);
    return out;
  }

  location(n) {
    if (n.isNull) return null;
    const l = this.object(n, 'a location', ['line', 'column']);
    const line = this.int(l.line, '`line`');
    const column = this.int(l.column, '`column`');
    return { line, column };
  }

  machine(root) {
    if (root.kind !== MAPPING) throw this.fail(root, 'wrong-type', `a machine document must be an object, found ${root.shapeName}`);
    // The format first: a document of another version is refused whatever else it holds.
    const formatNode = root.get('format');
    if (formatNode === undefined) throw this.fail(root, 'missing-key', 'the document has no `format`', `a machine document starts \`{"format":"${FORMAT}"\``);
    const given = this.string(formatNode, '`format`');
    if (given !== FORMAT) {
      throw this.fail(formatNode, 'unsupported-format', `this engine reads \`${FORMAT}\`, not \`${given}\``, 'compile the policy again with a `policyctl` whose format this runtime reads');
    }
    const m = this.object(root, 'the machine document', [
      'format', 'digest', 'name', 'description', 'source', 'states', 'events', 'transitions', 'rules', 'attributes',
      'trusted_apps', 'reveal_refusal', 'scopes', 'levers',
    ]);
    const digestGiven = this.string(m.digest, '`digest`');
    const received = this.canonical(root);
    delete received.digest;
    const receivedText = canonicalText(received);
    const digestFound = 'sha256:' + sha256Hex(receivedText);
    if (digestGiven !== digestFound) {
      throw this.fail(m.digest, 'digest-mismatch', `the document's digest is \`${digestGiven}\`, its content's \`${digestFound}\``, 'the document was changed after it was written, or arrived incomplete: fetch or compile it again');
    }
    const source = this.optionalString(m.source, '`source`');
    const states = this.array(m.states, '`states`').map((x) => this.string(x, 'a state'));
    if (!sameList(states, STATES)) {
      throw this.fail(m.states, 'inconsistent-machine', "the machine's states are not this engine's", `this engine has ${STATES.join(', ')}`);
    }
    const events = this.array(m.events, '`events`').map((x) => this.string(x, 'an event'));
    if (!sameList(events, EVENTS)) {
      throw this.fail(m.events, 'inconsistent-machine', "the machine's events are not this engine's", `this engine has ${EVENTS.join(', ')}`);
    }
    const attributes = this.array(m.attributes, '`attributes`').map((x) => this.attribute(x));
    const rules = this.array(m.rules, '`rules`').map((x) => this.rule(x, attributes));
    const transitionNodes = this.array(m.transitions, '`transitions`');
    const transitions = transitionNodes.map((n, i) => {
      const t = this.object(n, 'a transition', ['id', 'from', 'event', 'guard', 'action', 'levers', 'location']);
      const id = this.int(t.id, '`id`');
      if (id != i) throw this.fail(t.id, 'inconsistent-machine', `transition ${i} has id ${id}`, 'ids are the positions in `transitions`, from 0');
      const g = readGuard(this, t.guard, rules.length);
      const from = this.keyword(t.from, 'state', STATES);
      const event = this.keyword(t.event, 'event', EVENTS);
      const action = this.action(t.action);
      const levers = this.array(t.levers, '`levers`').map((x) => this.string(x, 'a lever'));
      const location = this.location(t.location);
      return { id: i, from, event, guard: g, action, levers, location };
    });
    const scopes = this.object(m.scopes, '`scopes`', ['none', 'none_hardware', 'biometric', 'biometric_hardware']);
    if (m.levers.kind !== MAPPING) throw this.fail(m.levers, 'wrong-type', '`levers` must be an object');
    const levers = Object.create(null);
    for (const [k, v] of m.levers.items) {
      const l = this.location(v);
      if (l === null) delete levers[k.text];
      else levers[k.text] = l;
    }
    const machine = {
      name: this.string(m.name, '`name`'),
      description: this.optionalString(m.description, '`description`'),
      source,
      transitions,
      rules,
      attributes,
      trustedApps: this.array(m.trusted_apps, '`trusted_apps`').map((x) => this.string(x, 'an app id')),
      revealsDetectionRefusal: this.bool(m.reveal_refusal, '`reveal_refusal`'),
      scopes: {
        none: this.keyword(scopes.none, 'scope', SCOPES),
        noneHardware: this.keyword(scopes.none_hardware, 'scope', SCOPES),
        biometric: this.keyword(scopes.biometric, 'scope', SCOPES),
        biometricHardware: this.keyword(scopes.biometric_hardware, 'scope', SCOPES),
      },
      levers,
    };
    // Grouped by (state, event) in the engine's order, each group ending in `always`.
    const groups = groupTransitions(transitions);
    for (let i = 0; i < transitions.length; i++) {
      const t = groups.list[i];
      if (t.from !== transitions[i].from || t.event !== transitions[i].event) {
        throw this.fail(transitionNodes[i], 'inconsistent-machine', `transition ${i} is out of order`, 'transitions are grouped by state, then event, in the order of `states` and `events`');
      }
    }
    for (let s = 0; s < STATES.length; s++) {
      for (let e = 0; e < EVENTS.length; e++) {
        const k = (s * EVENTS.length + e) * 2;
        const start = groups.table[k];
        const end = groups.table[k + 1];
        if (end === start || groups.list[end - 1].guard.code !== G.always) {
          throw this.fail(m.transitions, 'inconsistent-machine', `no transition decides \`${EVENTS[e]}\` in \`${STATES[s]}\` whatever the facts`, 'every (state, event) group ends with a transition whose guard is `always`');
        }
      }
    }
    // Written back, the machine must be the document.
    if (canonicalText(documentValue(machine)) !== receivedText) {
      throw this.fail(root, 'inconsistent-machine', 'the document is not the machine this engine reads from it', 'write the document with `policyctl compile --format machine`; do not edit it by hand');
    }
    received.digest = digestGiven;
    return { machine, digest: digestFound, text: canonicalText(received) };
  }

  action(n) {
    const a = this.object(n, 'an action', ['decision', 'reason', 'message', 'target', 'effects', 'notices', 'names_scope', 'uses_previous_auth_mode', 'notice_delay_seconds']);
    const targetName = this.string(a.target, '`target`');
    const target = targetName === 'resting' || targetName === 'unchanged' ? targetName : this.keyword(a.target, 'target state', STATES);
    let effects = 0;
    for (const x of this.array(a.effects, '`effects`')) {
      const name = this.string(x, 'an effect');
      const bit = EFFECTS.indexOf(name);
      if (bit < 0) throw this.fail(x, 'invalid-value', `unknown effect \`${name}\``, closestHelp(name, EFFECTS));
      effects |= 1 << bit;
    }
    let notices = 0;
    for (const x of this.array(a.notices, '`notices`')) {
      const name = this.string(x, 'a notice');
      const notice = NOTICES.find(([n]) => n === name);
      if (notice === undefined) throw this.fail(x, 'invalid-value', `unknown notice \`${name}\``);
      notices |= notice[1];
    }
    const decision = a.decision.isNull ? null : this.keyword(a.decision, 'decision', DECISIONS);
    const reason = this.string(a.reason, '`reason`');
    const namesScope = this.bool(a.names_scope, '`names_scope`');
    const usesPreviousAuthMode = this.bool(a.uses_previous_auth_mode, '`uses_previous_auth_mode`');
    const noticeDelay = a.notice_delay_seconds.isNull ? null : this.seconds(a.notice_delay_seconds, '`notice_delay_seconds`');
    const message = this.string(a.message, '`message`');
    return { decision, reason, message, target, effects, notices, namesScope, usesPreviousAuthMode, noticeDelay };
  }

  attribute(n) {
    const a = this.object(n, 'an attribute', ['name', 'type']);
    const k = a.type.kind === MAPPING ? a.type.get('kind') : undefined;
    if (k === undefined) throw this.fail(a.type, 'wrong-type', "an attribute's `type` must be an object with a `kind`");
    const kind = this.string(k, '`kind`');
    let type;
    if (kind === 'words') {
      const words = this.array(this.object(a.type, 'type `words`', ['kind', 'words']).words, '`words`').map((x) => this.string(x, 'a word'));
      type = { kind, words };
    } else if (ATTRIBUTE_TYPES.includes(kind)) {
      this.object(a.type, `type \`${kind}\``, ['kind']);
      type = { kind };
    } else {
      throw this.fail(k, 'invalid-value', `unknown attribute type \`${kind}\``);
    }
    return { name: this.string(a.name, '`name`'), type };
  }

  rule(n, attributes) {
    const r = this.object(n, 'a rule', ['name', 'on', 'condition', 'text']);
    return {
      name: this.string(r.name, '`name`'),
      on: this.array(r.on, '`on`').map((x) => this.keyword(x, 'event', EVENTS)),
      condition: this.condition(r.condition, attributes),
      text: this.string(r.text, '`text`'),
    };
  }

  condition(n, attributes) {
    const opNode = n.kind === MAPPING ? n.get('op') : undefined;
    if (opNode === undefined) throw this.fail(n, 'wrong-type', 'a condition must be an object with an `op`');
    const op = this.string(opNode, '`op`');
    const factKey = n.get('attribute') !== undefined ? 'attribute' : 'fact';
    const fact = (c, cond) => {
      if (c.attribute !== undefined) {
        const name = this.string(c.attribute, '`attribute`');
        if (!attributes.some((a) => sameText(a.name, name))) {
          throw this.fail(c.attribute, 'inconsistent-machine', `the condition reads attribute \`${name}\`, which the machine does not declare`);
        }
        cond.fact = F_ATTRIBUTE;
        cond.name = name;
        return;
      }
      const name = this.string(c.fact, '`fact`');
      const i = FACTS.indexOf(name);
      if (i < 0) throw this.fail(c.fact, 'invalid-value', `unknown fact \`${name}\``, closestHelp(name, FACTS));
      cond.fact = i;
      cond.name = name;
    };
    const comparison = (node) => {
      const s = this.string(node, '`comparison`');
      const i = COMPARISONS.indexOf(s);
      if (i < 0) throw this.fail(node, 'invalid-value', `unknown comparison \`${s}\``);
      return i;
    };
    switch (op) {
      case 'one_of': {
        const c = this.object(n, 'condition `one_of`', ['op', factKey, 'values', 'negated']);
        const cond = new Condition(C_ONE_OF);
        fact(c, cond);
        cond.values = this.array(c.values, '`values`').map((x) => this.string(x, 'a value'));
        cond.negated = this.bool(c.negated, '`negated`');
        return cond;
      }
      case 'compare': {
        const c = this.object(n, 'condition `compare`', ['op', factKey, 'comparison', 'value']);
        const cond = new Condition(C_COMPARE);
        fact(c, cond);
        cond.cmp = comparison(c.comparison);
        cond.value = this.int(c.value, '`value`');
        return cond;
      }
      case 'compare_version': {
        const c = this.object(n, 'condition `compare_version`', ['op', factKey, 'comparison', 'value']);
        const text = this.string(c.value, '`value`');
        const v = parseVersion(text);
        if (v === null) throw this.fail(c.value, 'invalid-value', `\`${text}\` is not a version`);
        const cond = new Condition(C_VERSION);
        fact(c, cond);
        cond.cmp = comparison(c.comparison);
        cond.value = v;
        return cond;
      }
      case 'and':
      case 'or': {
        const c = this.object(n, `condition \`${op}\``, ['op', 'left', 'right']);
        const cond = new Condition(op === 'and' ? C_AND : C_OR);
        cond.left = this.condition(c.left, attributes);
        cond.right = this.condition(c.right, attributes);
        return cond;
      }
      case 'not': {
        const cond = new Condition(C_NOT);
        cond.left = this.condition(this.object(n, 'condition `not`', ['op', 'operand']).operand, attributes);
        return cond;
      }
      default:
        throw this.fail(opNode, 'invalid-value', `unknown condition \`${op}\``, 'one of one_of, compare, compare_version, and, or, not');
    }
  }
}

/** Whether two lists of strings are equal, item by item. */
function sameList(a, b) {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Transitions grouped by (state, event), keeping order: the list and `[start, end)` per pair. */
function groupTransitions(transitions) {
  const buckets = Array.from({ length: STATES.length * EVENTS.length }, () => []);
  for (const t of transitions) buckets[STATE_INDEX[t.from] * EVENTS.length + EVENT_INDEX[t.event]].push(t);
  const list = [];
  const table = new Int32Array(buckets.length * 2);
  buckets.forEach((bucket, key) => {
    table[key * 2] = list.length;
    for (const t of bucket) list.push(t);
    table[key * 2 + 1] = list.length;
  });
  return { list, table };
}

/** The document value of a condition (`MachineDocument.condition`). */
function conditionValue(c) {
  const fact = () => (c.fact === F_ATTRIBUTE ? { attribute: c.name } : { fact: c.name });
  switch (c.op) {
    case C_ONE_OF: return { ...fact(), op: CONDITION_OPS[C_ONE_OF], values: c.values, negated: c.negated };
    case C_COMPARE: return { ...fact(), op: CONDITION_OPS[C_COMPARE], comparison: COMPARISONS[c.cmp], value: c.value };
    case C_VERSION: return { ...fact(), op: CONDITION_OPS[C_VERSION], comparison: COMPARISONS[c.cmp], value: c.value.join('.') };
    case C_AND: return { op: CONDITION_OPS[C_AND], left: conditionValue(c.left), right: conditionValue(c.right) };
    case C_OR: return { op: CONDITION_OPS[C_OR], left: conditionValue(c.left), right: conditionValue(c.right) };
    default: return { op: CONDITION_OPS[C_NOT], operand: conditionValue(c.left) };
  }
}

/** The document value of a machine, without its digest (`MachineDocument.value`). */
function documentValue(m) {
  const { list } = groupTransitions(m.transitions);
  const levers = Object.create(null);
  for (const k of Object.keys(m.levers)) levers[k] = { line: m.levers[k].line, column: m.levers[k].column };
  return {
    format: FORMAT,
    name: m.name,
    description: m.description,
    source: m.source,
    states: STATES,
    events: EVENTS,
    transitions: list.map((t, id) => ({
      id,
      from: t.from,
      event: t.event,
      guard: guardValue(t.guard),
      action: {
        decision: t.action.decision,
        reason: t.action.reason,
        message: t.action.message,
        target: t.action.target,
        effects: EFFECTS.filter((_, bit) => t.action.effects & (1 << bit)),
        notices: NOTICES.filter(([, bit]) => t.action.notices & bit).map(([name]) => name),
        names_scope: t.action.namesScope,
        uses_previous_auth_mode: t.action.usesPreviousAuthMode,
        notice_delay_seconds: t.action.noticeDelay,
      },
      levers: t.levers,
      location: t.location === null ? null : { line: t.location.line, column: t.location.column },
    })),
    rules: m.rules.map((r) => ({ name: r.name, on: r.on, condition: conditionValue(r.condition), text: r.text })),
    attributes: m.attributes.map((a) => ({ name: a.name, type: a.type.kind === 'words' ? { kind: 'words', words: a.type.words } : { kind: a.type.kind } })),
    trusted_apps: m.trustedApps,
    reveal_refusal: m.revealsDetectionRefusal,
    scopes: {
      none: m.scopes.none,
      none_hardware: m.scopes.noneHardware,
      biometric: m.scopes.biometric,
      biometric_hardware: m.scopes.biometricHardware,
    },
    levers,
  };
}

export { ATTRIBUTE_TYPES, CONDITION_OPS, C_AND, C_COMPARE, C_NOT, C_ONE_OF, C_OR, DOCUMENT_CODES, DocumentReader, FACTS, F_ATTRIBUTE, G, documentValue, groupTransitions };
