// Signed machines (docs/envelope.md): `MachineUpdater`'s checks, in order, over an envelope
// verified with a pinned P-256 key (p256.mjs), and `keyId`.

import { SessionPolicyError, refuse } from './errors.mjs';
import { MAPPING, SCALAR, parseJSON } from './json.mjs';
import { PolicyMachine } from './machine.mjs';
import { derFromPEM, p256KeyFromSPKI, verifyP256 } from './p256.mjs';
import { sha256, sha256Hex } from './sha256.mjs';
import { sameText, utf8Encode, utf8Length } from './text.mjs';
import { Timestamp } from './time.mjs';

/** The envelope's payload format. */
export const ENVELOPE_FORMAT = 'sessionpolicy-envelope/1';
const ENVELOPE_TYPE = 'sessionpolicy-machine+jws';
/** Check 1: at most 4 MiB. */
const ENVELOPE_LIMIT = 4 * 1024 * 1024;
const SERIAL_MAX = 9007199254740991n;
const TIME_MAX = 253402300799999n;
const DEFAULT_TOLERANCE = 600000;

/** A base64url character's value (`A`-`Z`, `a`-`z`, `0`-`9`, `-`, `_`), else -1. */
const BASE64URL_VALUE = new Int8Array(128).fill(-1);
'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'.split('').forEach((c, i) => {
  BASE64URL_VALUE[c.charCodeAt(0)] = i;
});

/** A pinned public key from its PEM: `{id, x, y}`; `invalid-key` for anything else. */
function readPinnedKey(pem, index) {
  const where = index === undefined ? 'the key' : `key ${index + 1}`;
  if (typeof pem !== 'string') {
    throw refuse('invalid-key', `${where} is not a string: a P-256 public key in PEM (PUBLIC KEY)`, null);
  }
  let der;
  let point;
  try {
    der = derFromPEM(pem);
    point = p256KeyFromSPKI(der);
  } catch (e) {
    throw refuse(
      'invalid-key', `${where}: ${e && e.message}`, null,
      'pin the public key as `openssl pkey -pubout` writes it: PEM `PUBLIC KEY`, ECDSA P-256, the point uncompressed',
    );
  }
  return { id: sha256Hex(der), x: point.x, y: point.y };
}

/**
 * The key id of a P-256 public key in PEM (`PUBLIC KEY`): the lowercase hex SHA-256 of its 91
 * bytes of DER, as `policyctl sign` prints it and an envelope's `kid` names it. Throws
 * `SessionPolicyError` `invalid-key` for anything but a P-256 public key, point uncompressed,
 * in PEM read strictly (one block, nothing but white space around it, canonical base64).
 */
export function keyId(pem) {
  return readPinnedKey(pem).id;
}

/**
 * The bytes of one base64url segment (RFC 4648 §5, no padding) of `b` from `start` to `end`, or
 * null when it is not one: a character outside the alphabet, a length 1 more than a multiple of
 * 4, or unused low bits of the last character that are not zero.
 */
function base64url(b, start, end) {
  const length = end - start;
  if (length % 4 === 1) return null;
  const out = new Uint8Array(Math.floor((length * 3) / 4));
  let n = 0;
  let acc = 0;
  let bits = 0;
  for (let i = start; i < end; i++) {
    const c = b[i];
    const v = c < 128 ? BASE64URL_VALUE[c] : -1;
    if (v < 0) return null;
    acc = ((acc << 6) | v) & 0xfff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[n++] = (acc >> bits) & 0xff;
    }
  }
  if ((acc & ((1 << bits) - 1)) !== 0) return null;
  return out;
}

/**
 * The header's and the payload's limits (docs/envelope.md, "Reading an envelope"): the machine
 * document's syntax, but each at most 4 MiB, 64 values and 8 levels.
 */
const ENVELOPE_JSON_LIMITS = Object.freeze({
  bytes: 4 * 1024 * 1024,
  nodes: 64,
  depth: 8,
  hint: "an envelope's header and payload are small objects; see docs/envelope.md",
});

/** Reads JSON bytes with the machine document's syntax, within the envelope's limits: the root, or a refusal's text. */
function envelopeJSON(bytes, what) {
  let root;
  try {
    root = parseJSON(bytes, ENVELOPE_JSON_LIMITS);
  } catch (e) {
    if (e instanceof SessionPolicyError) return `the ${what} is not JSON the reader accepts (${e.code}: ${e.diagnostics[0].message})`;
    throw e;
  }
  if (root === null) return `the ${what} is empty`;
  if (root.kind !== MAPPING) return `the ${what} is ${root.shapeName}, not a JSON object`;
  return root;
}

/** Whether a node is a JSON string. */
function isJSONString(node) {
  return node.kind === SCALAR && !node.plain;
}

/** An integer member: a JSON number with no fraction or exponent, from `min` to `max`; else null. */
function boundedInteger(node, min, max) {
  if (node.kind !== SCALAR || !node.plain || !/^-?(0|[1-9][0-9]*)$/.test(node.text)) return null;
  const v = BigInt(node.text);
  return v >= min && v <= max ? Number(v) : null;
}

const PAYLOAD_MEMBERS = ['format', 'policy', 'serial', 'issued_at', 'expires_at', 'digest', 'machine'];
const DIGEST_PATTERN = /^sha256:[0-9a-f]{64}$/;

/** The envelope as bytes (a string's UTF-8), or the refusal of check 1. */
function envelopeBytes(envelope) {
  if (typeof envelope === 'string') {
    const size = utf8Length(envelope);
    if (size > ENVELOPE_LIMIT) return size;
    return utf8Encode(envelope);
  }
  let bytes;
  if (envelope instanceof Uint8Array) bytes = envelope;
  else if (envelope instanceof ArrayBuffer) bytes = new Uint8Array(envelope);
  else if (ArrayBuffer.isView(envelope)) bytes = new Uint8Array(envelope.buffer, envelope.byteOffset, envelope.byteLength);
  else throw new TypeError('an envelope is its text (a string) or its bytes (a Uint8Array or an ArrayBuffer)');
  return bytes.length > ENVELOPE_LIMIT ? bytes.length : bytes;
}

function refused(code, message) {
  return Object.freeze({ result: 'refused', code, message });
}

/** A time given to `offer`, or a tolerance: a safe integer number of milliseconds. */
function millis(v, what, min) {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) {
    throw new TypeError(`${what} must be an integer number of milliseconds${min === 0 ? ', not negative' : ''}`);
  }
  return v;
}

/**
 * Keeps the machine a client decides with up to date from signed envelopes
 * (`sessionpolicy-envelope/1`, docs/envelope.md), verified against the public keys the app
 * pins. The fetch is the app's: give the updater the bytes; it returns `installed`,
 * `unchanged` or `refused` (with the code of the first failed check), and after a refusal it
 * keeps the machine it had. Reads no clock: `offer` takes the time.
 */
export class MachineUpdater {
  /**
   * `policy`: the policy's name the app expects; `keys`: the pinned public keys (PEM `PUBLIC
   * KEY`, P-256), at least one; `tolerance`: the device clock's tolerance in milliseconds (10
   * minutes unless given; 0 or more). Throws `SessionPolicyError` `invalid-key` for a key that
   * is not a P-256 public key, or for no key at all, then `invalid-value` for a negative
   * tolerance; a `TypeError` for a policy that is not a non-empty string or a tolerance that is
   * not an integer number.
   */
  constructor({ policy, keys, tolerance = DEFAULT_TOLERANCE } = {}) {
    if (typeof policy !== 'string' || policy === '') throw new TypeError('`policy` must be the policy\'s name, a non-empty string');
    if (!Array.isArray(keys) || keys.length === 0) {
      throw refuse(
        'invalid-key', 'an updater needs at least one pinned public key', null,
        'pin the public key(s) the machines are signed with: `keys: [pem, ...]`',
      );
    }
    this._keys = keys.map((pem, i) => readPinnedKey(pem, i));
    if (typeof tolerance === 'number' && tolerance < 0) {
      throw refuse(
        'invalid-value', `the clock tolerance is ${tolerance} ms, less than 0`, null,
        'give 0 or more milliseconds; the default is 10 minutes (600000)',
      );
    }
    /** The policy this updater takes machines of. */
    this.policy = policy;
    /** The clock tolerance, in milliseconds. */
    this.tolerance = millis(tolerance, '`tolerance`', 0);
    /** The pinned keys' ids, in the order given. */
    this.keyIds = Object.freeze(this._keys.map((k) => k.id));
    this._current = null;
    Object.seal(this);
  }

  /**
   * The installed envelope, or null: `{policy, serial, issuedAt, expiresAt, digest, keyId,
   * envelope, machine}`; `envelope` is the text to store, exactly as it was given (white space
   * included: the string itself, or the text of the bytes, whose UTF-8 is those very bytes),
   * `machine` the `PolicyMachine`.
   */
  get current() {
    return this._current;
  }

  /** The machine to decide with, or null when none is installed. */
  get machine() {
    return this._current === null ? null : this._current.machine;
  }

  /**
   * Restores the envelope stored at the last install (or shipped with the app), at start:
   * checks 1 to 12, 15 and 16, not the times; and 17 when a machine is already held.
   * `installed`, `unchanged` (only when a machine is held) or `refused`.
   */
  restore(envelope) {
    return this._read(envelope, null);
  }

  /**
   * Offers a fetched envelope (text or bytes) at `nowMillis` (the device's clock, milliseconds
   * since the epoch): every check. `installed` (store `result.envelope`: the envelope exactly
   * as given), `unchanged`, or `refused` with the code of the first failed check.
   */
  offer(envelope, nowMillis) {
    return this._read(envelope, millis(nowMillis, '`nowMillis`', -Infinity));
  }

  /** The checks of docs/envelope.md, in order; `now` null when restoring (no time checks). */
  _read(envelope, now) {
    // 1. The size.
    const b = envelopeBytes(envelope);
    if (typeof b === 'number') {
      return refused('envelope-too-large', `the envelope is ${b} bytes, more than the limit of ${ENVELOPE_LIMIT} bytes`);
    }
    const segments = envelopeSegments(b);
    if (segments.result === 'refused') return segments;
    const h = envelopeHeader(segments.headerBytes);
    if (h.result === 'refused') return h;
    const key = this._verify(b, segments, h);
    if (key.result === 'refused') return key;
    const p = envelopePayload(segments.payloadBytes);
    if (p.result === 'refused') return p;
    const { policy, serial, issuedAt, expiresAt, digest, machineText } = p;

    // 12. The policy expected.
    if (!sameText(policy, this.policy)) {
      return refused('wrong-policy', `the envelope is for policy \`${policy}\`, not \`${this.policy}\``);
    }

    // 13 and 14: the times, against the device's clock (not when restoring).
    if (now !== null) {
      if (BigInt(issuedAt) > BigInt(now) + BigInt(this.tolerance)) {
        return refused('not-yet-valid', `the envelope was issued at ${Timestamp.format(issuedAt)}, after now (${now} ms) and the clock's tolerance`);
      }
      if (BigInt(expiresAt) < BigInt(now) - BigInt(this.tolerance)) {
        return refused('expired', `the envelope expired at ${Timestamp.format(expiresAt)}, before now (${now} ms) less the clock's tolerance`);
      }
    }

    // 15. The machine document.
    let machine;
    try {
      machine = PolicyMachine.fromDocument(machineText, 'machine.json');
    } catch (e) {
      if (!(e instanceof SessionPolicyError)) throw e;
      return refused('machine-refused', `the machine document is refused: ${e.code}: ${e.diagnostics[0] ? e.diagnostics[0].message : e.message}`);
    }

    // 16. The machine is the one the payload names.
    if (machine.digest !== digest) {
      return refused('machine-mismatch', `the machine's digest is ${machine.digest}, the payload names ${digest}`);
    }
    if (!sameText(machine.name, policy)) {
      return refused('machine-mismatch', `the machine is policy \`${machine.name}\`, the payload names \`${policy}\``);
    }

    // 17. Against the envelope held, if any (a restore too, when a machine is held): a larger
    // serial installs, whatever its machine (the same machine signed later moves the serial held
    // up, so that no envelope signed before it can come back); the machine held with a serial
    // not larger is `unchanged`; another machine with a serial not larger is a rollback.
    const held = this._current;
    if (held !== null && serial <= held.serial) {
      if (digest === held.digest) return Object.freeze({ result: 'unchanged' });
      return refused(
        'rollback',
        serial === held.serial
          ? `serial ${serial} is the held one's, with another machine (${digest}, held ${held.digest})`
          : `serial ${serial} is older than the held one's (${held.serial}), with another machine`,
      );
    }

    // The envelope handed back to store is exactly what was given, white space included: the
    // string itself, or the text of the bytes (ASCII, by check 2: its UTF-8 is those bytes).
    const text = typeof envelope === 'string' ? envelope : latin(b, 0, b.length);
    this._current = Object.freeze({ policy, serial, issuedAt, expiresAt, digest, keyId: key.id, envelope: text, machine });
    return Object.freeze({ result: 'installed', machine, serial, digest, envelope: text });
  }

  /** Checks 4 to 8: the type, the algorithm, the key and the signature; the key, or a refusal. */
  _verify(b, { start, second, end, signatureBytes }, h) {
    // `typ`, `alg`, `kid` (and `format`, `digest`) are compared byte for byte; names (`policy`)
    // by string equality.
    if (h.typ !== ENVELOPE_TYPE) {
      return refused('unsupported-envelope', `the header's \`typ\` is \`${h.typ}\`, not \`${ENVELOPE_TYPE}\``);
    }
    if (h.alg !== 'ES256') {
      return refused('unsupported-algorithm', `the envelope is signed with \`${h.alg}\`; only \`ES256\` is accepted`);
    }
    if (second + 1 === end) return refused('signature-missing', 'the envelope has no signature');
    const key = this._keys.find((k) => h.kid === k.id);
    if (key === undefined) {
      return refused('unpinned-key', `the envelope is signed with key \`${h.kid}\`, which is not pinned (pinned: ${this.keyIds.join(', ')})`);
    }
    if (signatureBytes.length !== 64) {
      return refused('bad-signature', `the signature is ${signatureBytes.length} bytes, not 64 (r and s)`);
    }
    if (!verifyP256(key, sha256(b.subarray(start, second)), signatureBytes)) {
      return refused('bad-signature', `the signature does not verify with key \`${key.id}\``);
    }
    return key;
  }
}

/** Check 2: three base64url segments, after ASCII white space at both ends. */
function envelopeSegments(b) {
  const space = (c) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
  let start = 0;
  let end = b.length;
  while (start < end && space(b[start])) start++;
  while (end > start && space(b[end - 1])) end--;
  const dots = [];
  for (let i = start; i < end; i++) if (b[i] === 0x2e) dots.push(i);
  if (dots.length !== 2) return refused('envelope-malformed', 'the envelope is not three base64url segments separated by `.`');
  const [first, second] = dots;
  if (first === start || second === first + 1) {
    return refused('envelope-malformed', `the envelope's ${first === start ? 'header' : 'payload'} segment is empty`);
  }
  const headerBytes = base64url(b, start, first);
  const payloadBytes = base64url(b, first + 1, second);
  const signatureBytes = base64url(b, second + 1, end);
  if (headerBytes === null || payloadBytes === null || signatureBytes === null) {
    const which = headerBytes === null ? 'header' : payloadBytes === null ? 'payload' : 'signature';
    return refused('envelope-malformed', `the envelope's ${which} segment is not base64url without padding`);
  }
  return { start, first, second, end, headerBytes, payloadBytes, signatureBytes };
}

/** Check 3: the header, exactly `alg`, `kid` and `typ`, each a string; its members, or a refusal. */
function envelopeHeader(headerBytes) {
  const header = envelopeJSON(headerBytes, 'header');
  if (typeof header === 'string') return refused('envelope-malformed', header);
  const h = Object.create(null);
  for (const [k, v] of header.items) {
    const name = k.text;
    if (name !== 'alg' && name !== 'kid' && name !== 'typ') {
      return refused('envelope-malformed', `the header has a member \`${k.text}\`: it has exactly \`alg\`, \`kid\` and \`typ\``);
    }
    if (!isJSONString(v)) return refused('envelope-malformed', `the header's \`${name}\` is not a string`);
    h[name] = v.text;
  }
  for (const name of ['alg', 'kid', 'typ']) {
    if (h[name] === undefined) return refused('envelope-malformed', `the header has no \`${name}\``);
  }
  return h;
}

/**
 * Checks 9 to 11: the payload's format, then exactly the seven members, of their types and
 * within their bounds; the members read, or a refusal.
 */
function envelopePayload(payloadBytes) {
  // 9 and 10: the payload's format.
  const payload = envelopeJSON(payloadBytes, 'payload');
  if (typeof payload === 'string') return refused('envelope-malformed', payload);
  const members = Object.create(null);
  for (const [k, v] of payload.items) members[k.text] = v;
  const format = members.format;
  if (format === undefined || !isJSONString(format)) {
    return refused('envelope-malformed', format === undefined ? 'the payload has no `format`' : 'the payload\'s `format` is not a string');
  }
  if (format.text !== ENVELOPE_FORMAT) {
    return refused('unsupported-envelope', `the payload's format is \`${format.text}\`, not \`${ENVELOPE_FORMAT}\``);
  }

  // 11. Exactly the seven members, of their types and within their bounds.
  for (const [k] of payload.items) {
    if (!PAYLOAD_MEMBERS.includes(k.text)) return refused('envelope-malformed', `the payload has an unknown member \`${k.text}\``);
  }
  for (const name of PAYLOAD_MEMBERS) {
    if (members[name] === undefined) return refused('envelope-malformed', `the payload has no \`${name}\``);
  }
  const malformed = (name, what) => refused('envelope-malformed', `the payload's \`${name}\` is not ${what}`);
  if (!isJSONString(members.policy) || members.policy.text === '') return malformed('policy', 'a non-empty string');
  const policy = members.policy.text;
  const serial = boundedInteger(members.serial, 1n, SERIAL_MAX);
  if (serial === null) return malformed('serial', 'an integer from 1 to 9007199254740991');
  const issuedAt = boundedInteger(members.issued_at, 0n, TIME_MAX);
  if (issuedAt === null) return malformed('issued_at', 'an integer number of milliseconds from 0 to 253402300799999');
  const expiresAt = boundedInteger(members.expires_at, 0n, TIME_MAX);
  if (expiresAt === null) return malformed('expires_at', 'an integer number of milliseconds from 0 to 253402300799999');
  if (expiresAt <= issuedAt) return malformed('expires_at', 'later than `issued_at`');
  if (!isJSONString(members.digest) || !DIGEST_PATTERN.test(members.digest.text)) {
    return malformed('digest', 'a machine digest (`sha256:` and 64 lowercase hex digits)');
  }
  const digest = members.digest.text;
  if (!isJSONString(members.machine)) return malformed('machine', 'a string (the machine document\'s text)');
  return { policy, serial, issuedAt, expiresAt, digest, machineText: members.machine.text };
}

/** ASCII bytes as a string, in chunks (an envelope may be megabytes). */
function latin(b, start, end) {
  let out = '';
  for (let i = start; i < end; i += 8192) out += String.fromCharCode.apply(null, b.subarray(i, Math.min(end, i + 8192)));
  return out;
}

export { millis };
