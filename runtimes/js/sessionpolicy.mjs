// SessionPolicy: the JavaScript runtime of a compiled session policy.
//
// Loads a machine document (`sessionpolicy-machine/1`, docs/machine-format.md) and evaluates
// events exactly as the Swift engine does (`StateMachine+Evaluation.swift`): the same outcome,
// byte for byte, for the same machine, state and event (spec/conformance). One ES module, no
// dependencies, no platform imports: Node 20, browsers and React Native.
//
// Fails closed: a document, state or event it cannot read is refused with diagnostics
// (`SessionPolicyError`), never read with defaults; an incomplete event is `idp_login`.
//
// `MachineUpdater` takes signed machines (`sessionpolicy-envelope/1`, docs/envelope.md) and
// verifies them against pinned P-256 keys (`p256.mjs`, pure JavaScript) before it installs one.

import { verifyP256, p256KeyFromSPKI, derFromPEM } from './p256.mjs';

/** The machine document format this runtime reads. */
export const FORMAT = 'sessionpolicy-machine/1';

// MARK: - Errors

/**
 * A refusal: the document, state or event cannot be read as it is. `diagnostics` lists the
 * problems, first found first; `code` is the first one's code (`digest-mismatch`, ...).
 */
export class SessionPolicyError extends Error {
  constructor(diagnostics) {
    const first = diagnostics[0];
    super(first ? `${first.code}: ${first.message}` : 'the input is not valid');
    this.name = 'SessionPolicyError';
    /** @type {Array<{severity: string, code: string, message: string, help?: string, path?: string, line?: number, column?: number}>} */
    this.diagnostics = diagnostics;
  }

  /** The code of the first diagnostic. */
  get code() {
    return this.diagnostics.length > 0 ? this.diagnostics[0].code : 'invalid-value';
  }
}

/** A diagnostic object; `at` is a node or a `{line, column}`; `path` names the key. */
function diagnostic(code, message, at, help, path) {
  const d = { severity: 'error', code, message };
  if (help !== undefined && help !== null) d.help = help;
  if (path !== undefined && path !== null && path !== '') d.path = path;
  if (at) {
    d.line = at.line;
    d.column = at.column;
  }
  return d;
}

function refuse(code, message, at, help, path) {
  return new SessionPolicyError([diagnostic(code, message, at, help, path)]);
}

// MARK: - Text

/**
 * Whether two strings are the same name or word: the same Unicode scalars (here the same UTF-16
 * code units), as docs/machine-format.md ("String equality") says. No Unicode normalization, so
 * no table of the engine's enters a decision: `Zo\u00eb` and `Zoe\u0308` are two users.
 */
function sameText(a, b) {
  return a === b;
}

/** Whether `list` holds `s` (compared as `sameText` compares). */
function containsText(list, s) {
  for (let i = 0; i < list.length; i++) if (list[i] === s) return true;
  return false;
}

/** Foundation's `whitespacesAndNewlines`: Unicode Z*, U+0009-U+000D and U+0085. */
function isSpaceOrNewline(c) {
  return (
    (c >= 0x09 && c <= 0x0d) || c === 0x20 || c === 0x85 || c === 0xa0 || c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000
  );
}

/** The UTF-8 bytes of `s` (a lone surrogate as U+FFFD; the readers refuse those before). */
export function utf8Encode(s) {
  const out = new Uint8Array(s.length * 3);
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      out[n++] = c;
      continue;
    }
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
        out[n++] = 0xf0 | (c >> 18);
        out[n++] = 0x80 | ((c >> 12) & 0x3f);
        out[n++] = 0x80 | ((c >> 6) & 0x3f);
        out[n++] = 0x80 | (c & 0x3f);
        continue;
      }
    }
    if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
    if (c < 0x800) {
      out[n++] = 0xc0 | (c >> 6);
      out[n++] = 0x80 | (c & 0x3f);
    } else {
      out[n++] = 0xe0 | (c >> 12);
      out[n++] = 0x80 | ((c >> 6) & 0x3f);
      out[n++] = 0x80 | (c & 0x3f);
    }
  }
  return out.subarray(0, n);
}

/** The number of UTF-8 bytes of `s`. */
function utf8Length(s) {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/**
 * Decodes UTF-8 bytes, keeping every invalid sequence as lone surrogates (U+DC80 + byte), which
 * the JSON reader refuses (`invalid-utf8`) where the Swift reader meets the bad bytes.
 */
function utf8Decode(b) {
  let out = '';
  let chunk = [];
  const flush = () => {
    out += String.fromCharCode.apply(null, chunk);
    chunk = [];
  };
  const cont = (k, lo = 0x80, hi = 0xbf) => k < b.length && b[k] >= lo && b[k] <= hi;
  for (let i = 0; i < b.length; ) {
    const c = b[i];
    let width = 0;
    if (c < 0x80) width = 1;
    else if (c >= 0xc2 && c <= 0xdf) width = cont(i + 1) ? 2 : 0;
    else if (c === 0xe0) width = cont(i + 1, 0xa0) && cont(i + 2) ? 3 : 0;
    else if ((c >= 0xe1 && c <= 0xec) || c === 0xee || c === 0xef) width = cont(i + 1) && cont(i + 2) ? 3 : 0;
    else if (c === 0xed) width = cont(i + 1, 0x80, 0x9f) && cont(i + 2) ? 3 : 0;
    else if (c === 0xf0) width = cont(i + 1, 0x90) && cont(i + 2) && cont(i + 3) ? 4 : 0;
    else if (c >= 0xf1 && c <= 0xf3) width = cont(i + 1) && cont(i + 2) && cont(i + 3) ? 4 : 0;
    else if (c === 0xf4) width = cont(i + 1, 0x80, 0x8f) && cont(i + 2) && cont(i + 3) ? 4 : 0;
    if (width === 0) {
      chunk.push(0xdc00 + c);
      i += 1;
    } else if (width === 1) {
      chunk.push(c);
      i += 1;
    } else if (width === 2) {
      chunk.push(((c & 0x1f) << 6) | (b[i + 1] & 0x3f));
      i += 2;
    } else if (width === 3) {
      chunk.push(((c & 0x0f) << 12) | ((b[i + 1] & 0x3f) << 6) | (b[i + 2] & 0x3f));
      i += 3;
    } else {
      const v = (((c & 0x07) << 18) | ((b[i + 1] & 0x3f) << 12) | ((b[i + 2] & 0x3f) << 6) | (b[i + 3] & 0x3f)) - 0x10000;
      chunk.push(0xd800 + (v >> 10), 0xdc00 + (v & 0x3ff));
      i += 4;
    }
    if (chunk.length >= 8192) flush();
  }
  flush();
  return out;
}

/** Compares two strings by their UTF-8 bytes (the canonical key order). */
function compareUTF8(a, b) {
  const n = a.length < b.length ? a.length : b.length;
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // UTF-16 puts U+E000..U+FFFF after the surrogates; UTF-8 (code point order) before them.
    x = x >= 0xd800 && x <= 0xdfff ? x + 0x2000 : x >= 0xe000 ? x - 0x800 : x;
    y = y >= 0xd800 && y <= 0xdfff ? y + 0x2000 : y >= 0xe000 ? y - 0x800 : y;
    return x - y;
  }
  return a.length - b.length;
}

const HEX = '0123456789abcdef';

/**
 * A JSON string as Swift writes it (the canonical writer and `JSONEncoder` on Linux alike):
 * `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other controls as `\u00xx`, everything else as it is.
 */
function quote(s) {
  let out = '"';
  let last = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && c !== 0x22 && c !== 0x5c) continue;
    if (i > last) out += s.slice(last, i);
    switch (c) {
      case 0x22: out += '\\"'; break;
      case 0x5c: out += '\\\\'; break;
      case 0x08: out += '\\b'; break;
      case 0x0c: out += '\\f'; break;
      case 0x0a: out += '\\n'; break;
      case 0x0d: out += '\\r'; break;
      case 0x09: out += '\\t'; break;
      default: out += '\\u00' + HEX[c >> 4] + HEX[c & 15];
    }
    last = i + 1;
  }
  return last === 0 ? '"' + s + '"' : out + s.slice(last) + '"';
}

// MARK: - SHA-256 (FIPS 180-4)

const K256 = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01,
  0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
  0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
  0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08,
  0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
  0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

/** SHA-256 of `bytes` (a `Uint8Array`), or of a string's UTF-8: the 32-byte digest. */
export function sha256(input) {
  const data = typeof input === 'string' ? utf8Encode(input) : input;
  const length = data.length;
  // Padding: 0x80, zeros, then the bit length as a 64-bit big-endian integer.
  const blocks = ((length + 8) >>> 6) + 1;
  const m = new Uint8Array(blocks * 64);
  m.set(data);
  m[length] = 0x80;
  const bits = length * 8;
  const end = blocks * 64;
  const high = Math.floor(bits / 0x100000000);
  m[end - 8] = high >>> 24;
  m[end - 7] = high >>> 16;
  m[end - 6] = high >>> 8;
  m[end - 5] = high;
  m[end - 4] = bits >>> 24;
  m[end - 3] = bits >>> 16;
  m[end - 2] = bits >>> 8;
  m[end - 1] = bits;
  let h0 = 0x6a09e667, h1 = 0xbb67ae85 | 0, h2 = 0x3c6ef372, h3 = 0xa54ff53a | 0;
  let h4 = 0x510e527f, h5 = 0x9b05688c | 0, h6 = 0x1f83d9ab, h7 = 0x5be0cd19;
  const w = new Int32Array(64);
  for (let off = 0; off < end; off += 64) {
    for (let t = 0; t < 16; t++) {
      const j = off + t * 4;
      w[t] = (m[j] << 24) | (m[j + 1] << 16) | (m[j + 2] << 8) | m[j + 3];
    }
    for (let t = 16; t < 64; t++) {
      const x = w[t - 15];
      const y = w[t - 2];
      const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
      const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
      w[t] = (w[t - 16] + s0 + w[t - 7] + s1) | 0;
    }
    let a = h0, b = h1, c = h2, d = h3, e = h4, f = h5, g = h6, h = h7;
    for (let t = 0; t < 64; t++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const ch = (e & f) ^ (~e & g);
      const t1 = (h + S1 + ch + K256[t] + w[t]) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const maj = (a & b) ^ (a & c) ^ (b & c);
      const t2 = (S0 + maj) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
    h5 = (h5 + f) | 0;
    h6 = (h6 + g) | 0;
    h7 = (h7 + h) | 0;
  }
  const out = new Uint8Array(32);
  [h0, h1, h2, h3, h4, h5, h6, h7].forEach((v, i) => {
    out[i * 4] = v >>> 24;
    out[i * 4 + 1] = v >>> 16;
    out[i * 4 + 2] = v >>> 8;
    out[i * 4 + 3] = v;
  });
  return out;
}

/** The lowercase hex SHA-256 of `input` (bytes, or a string's UTF-8). */
export function sha256Hex(input) {
  let s = '';
  for (const b of sha256(input)) s += HEX[b >> 4] + HEX[b & 15];
  return s;
}

// MARK: - Integers

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** An integer as a number when it is safe, else a BigInt: exact either way. */
function exact(big) {
  return big >= -9007199254740991n && big <= 9007199254740991n ? Number(big) : big;
}

/** Swift's `Int64(text)`: an optional sign and ASCII digits, within 64 bits; else null. */
function parseInt64(text, allowPlus = true) {
  const n = text.length;
  let i = 0;
  if (n === 0) return null;
  const c0 = text.charCodeAt(0);
  if (c0 === 0x2d || (allowPlus && c0 === 0x2b)) i = 1;
  if (i === n) return null;
  for (let k = i; k < n; k++) {
    const c = text.charCodeAt(k);
    if (c < 48 || c > 57) return null;
  }
  if (n - i <= 15) {
    const v = Number(text.slice(i));
    return c0 === 0x2d ? (v === 0 ? 0 : -v) : v;
  }
  const big = BigInt(c0 === 0x2b ? text.slice(1) : text);
  if (big < INT64_MIN || big > INT64_MAX) return null;
  return exact(big);
}

/** `n + 1`, saturating at Int64.max, from at least 0: Swift's `StateMachine.increment`. */
function increment(n) {
  if (typeof n === 'number') {
    if (n < 0) return 1;
    return n < 9007199254740991 ? n + 1 : exact(BigInt(n) + 1n);
  }
  if (n < 0n) return 1;
  return n < INT64_MAX ? exact(n + 1n) : n;
}

// MARK: - Vocabulary

/** The machine states, in the engine's order. */
export const STATES = Object.freeze(['signed_out', 'active', 'suspended', 'awaiting_biometric', 'awaiting_idp', 'read_only']);
/** The event kinds, in the engine's order. */
export const EVENTS = Object.freeze([
  'launch', 'resume', 'background', 'biometric_succeeded', 'biometric_failed', 'offline_login_failed',
  'idp_login_succeeded', 'idp_login_failed', 'token_refreshed', 'refresh_failed', 'account_deactivated',
  'tokens_revoked', 'license_revoked', 'biometric_enrollment_changed', 'logout', 'register', 'device_session_detected',
]);
const DECISIONS = ['allow', 'require_biometric', 'idp_login', 'wipe'];
const AUTH_MODES = ['none', 'biometric', 'password', 'pin'];
const NETWORKS = ['online', 'offline'];
const KEYSTORES = ['hardware', 'software', 'none'];
const INTEGRITIES = ['ok', 'compromised'];
const CAUSES = ['network', 'invalid_token'];
const SCOPES = ['no_auth_offline', 'bio_auth_offline', 'no_auth_grant', 'bio_auth_grant', 'bio_auth_grant_SE'];
const FAILURE_PATHS = ['biometric', 'offline_login', 'idp_login'];
const SWITCHES = ['different_user', 'different_device'];
const COMPARISONS = ['==', '!=', '<', '<=', '>', '>='];

const STATE_INDEX = Object.create(null);
STATES.forEach((s, i) => (STATE_INDEX[s] = i));
const EVENT_INDEX = Object.create(null);
EVENTS.forEach((e, i) => (EVENT_INDEX[e] = i));

/** The word of `list` equal to `text` (the interned constant), or undefined. */
function word(list, text) {
  for (let i = 0; i < list.length; i++) if (list[i] === text) return list[i];
  return undefined;
}

/** The effects, in bit order (docs/machine-format.md). */
const EFFECTS = [
  'establish', 'clear_session', 'record_online', 'record_activity', 'count_biometric_failure', 'count_offline_failure',
  'count_idp_failure', 'reset_biometric_failures', 'lock_biometric', 'set_read_only', 'adopt_behind_biometric',
];
const FX_ESTABLISH = 1 << 0;
const FX_CLEAR = 1 << 1;
const FX_RECORD_ONLINE = 1 << 2;
const FX_RECORD_ACTIVITY = 1 << 3;
const FX_COUNT_BIOMETRIC = 1 << 4;
const FX_COUNT_OFFLINE = 1 << 5;
const FX_COUNT_IDP = 1 << 6;
const FX_RESET_BIOMETRIC = 1 << 7;
const FX_LOCK_BIOMETRIC = 1 << 8;
const FX_SET_READ_ONLY = 1 << 9;
const FX_ADOPT = 1 << 10;

/** The notices with their bits, in name order (how they are written). */
const NOTICES = [
  ['network_required', 1],
  ['read_only', 8],
  ['retry_later', 16],
  ['suggest_auth_mode_change', 2],
  ['unsynced_data', 4],
];
const N_NETWORK_REQUIRED = 1;
const N_READ_ONLY = 8;
/** The sorted names of every set of notices, by its bits: shared, frozen lists. */
const NOTICE_LISTS = Array.from({ length: 32 }, (_, mask) =>
  Object.freeze(NOTICES.filter(([, bit]) => mask & bit).map(([name]) => name)),
);
const NOTICE_JSON = NOTICE_LISTS.map((list) => '[' + list.map(quote).join(',') + ']');

/** The built-in reasons' messages that the engine itself writes. */
const MESSAGE_UNEXPECTED_EVENT = "this event is not expected in the session's current state: sign in again";

/** The facts an event kind must carry, in reporting order: [key, field]. */
const REQUIRED_FACTS = Object.create(null);
REQUIRED_FACTS.launch = [['network', 'network']];
REQUIRED_FACTS.resume = [['network', 'network']];
REQUIRED_FACTS.register = [['network', 'network']];
REQUIRED_FACTS.idp_login_succeeded = [['auth_mode', 'authMode'], ['user', 'user']];
REQUIRED_FACTS.device_session_detected = [['app_id', 'appID'], ['user', 'user']];
REQUIRED_FACTS.refresh_failed = [['cause', 'cause']];
const NO_FACTS = [];

// MARK: - Times and durations

const EARLIEST = -62135596800000;
const LATEST = 253402300799999;

function daysIn(month, year) {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

// Howard Hinnant's days_from_civil / civil_from_days, as Timestamp.swift.
function daysFromCivil(year, month, day) {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.trunc((y >= 0 ? y : y - 399) / 400);
  const yoe = y - era * 400;
  const mp = (month + 9) % 12;
  const doy = Math.trunc((153 * mp + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.trunc(yoe / 4) - Math.trunc(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function civilFromDays(z0) {
  const z = z0 + 719468;
  const era = Math.trunc((z >= 0 ? z : z - 146096) / 146097);
  const doe = z - era * 146097;
  const yoe = Math.trunc((doe - Math.trunc(doe / 1460) + Math.trunc(doe / 36524) - Math.trunc(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.trunc(yoe / 4) - Math.trunc(yoe / 100));
  const mp = Math.trunc((5 * doy + 2) / 153);
  const d = doy - Math.trunc((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d];
}

function two(v) {
  return v < 10 ? '0' + v : '' + v;
}

let lastDay = NaN;
let lastDate = '';

/**
 * Times: milliseconds since the Unix epoch, read and written as RFC 3339 exactly as
 * `Timestamp.swift` does.
 */
export const Timestamp = Object.freeze({
  /** The earliest time accepted: 0001-01-01T00:00:00Z. */
  earliest: EARLIEST,
  /** The latest time accepted: 9999-12-31T23:59:59.999Z. */
  latest: LATEST,

  /**
   * Parses RFC 3339: `YYYY-MM-DDTHH:MM:SS` (`T`, `t` or a space), an optional fraction
   * (milliseconds kept, finer digits dropped), then `Z`, `z` or `±HH:MM`; or a plain date
   * `YYYY-MM-DD` (midnight UTC). Milliseconds, or null for anything else and for times
   * outside years 0001 to 9999.
   */
  parse(text) {
    if (typeof text !== 'string') return null;
    const n = text.length;
    const num = (from, count) => {
      if (from + count > n) return -1;
      let v = 0;
      for (let i = from; i < from + count; i++) {
        const c = text.charCodeAt(i);
        if (c < 48 || c > 57) return -1;
        v = v * 10 + (c - 48);
      }
      return v;
    };
    if (n < 10) return null;
    const y = num(0, 4);
    if (y < 0 || text.charCodeAt(4) !== 45) return null;
    const mo = num(5, 2);
    if (mo < 0 || text.charCodeAt(7) !== 45) return null;
    const d = num(8, 2);
    if (d < 0) return null;
    if (mo < 1 || mo > 12 || d < 1 || d > daysIn(mo, y)) return null;
    let h = 0, mi = 0, s = 0, offset = 0, millis = 0;
    if (n > 10) {
      if (n < 20) return null;
      const sep = text.charCodeAt(10);
      if (sep !== 84 && sep !== 116 && sep !== 32) return null;
      const hh = num(11, 2);
      if (hh < 0 || text.charCodeAt(13) !== 58) return null;
      const mm = num(14, 2);
      if (mm < 0 || text.charCodeAt(16) !== 58) return null;
      const ss = num(17, 2);
      if (ss < 0 || hh >= 24 || mm >= 60 || ss >= 60) return null;
      h = hh;
      mi = mm;
      s = ss;
      let i = 19;
      if (i < n && text.charCodeAt(i) === 46) {
        i += 1;
        const start = i;
        while (i < n) {
          const c = text.charCodeAt(i);
          if (c < 48 || c > 57) break;
          if (i - start < 3) millis = millis * 10 + (c - 48);
          i += 1;
        }
        if (i === start) return null;
        for (let k = Math.min(3, i - start); k < 3; k++) millis *= 10;
      }
      if (i >= n) return null;
      const z = text.charCodeAt(i);
      if (z === 90 || z === 122) {
        if (i + 1 !== n) return null;
      } else if (z === 43 || z === 45) {
        if (i + 6 !== n) return null;
        const oh = num(i + 1, 2);
        if (oh < 0 || text.charCodeAt(i + 3) !== 58) return null;
        const om = num(i + 4, 2);
        if (om < 0 || oh >= 24 || om >= 60) return null;
        offset = (oh * 3600 + om * 60) * (z === 43 ? 1 : -1);
      } else {
        return null;
      }
    }
    if (y < 1) return null;
    const days = daysFromCivil(y, mo, d);
    const ms = (days * 86400 + (h * 3600 + mi * 60 + s - offset)) * 1000 + millis;
    return ms >= EARLIEST && ms <= LATEST ? ms : null;
  },

  /** RFC 3339 in UTC: `2026-03-01T09:30:00Z`, with `.250` when there are milliseconds. */
  format(ms) {
    const m = ((ms % 1000) + 1000) % 1000;
    const seconds = (ms - m) / 1000;
    const r = ((seconds % 86400) + 86400) % 86400;
    const days = (seconds - r) / 86400;
    if (days !== lastDay) {
      const [y, mo, d] = civilFromDays(days);
      let year = '' + y;
      while (year.length < 4) year = '0' + year;
      lastDate = year + '-' + two(mo) + '-' + two(d) + 'T';
      lastDay = days;
    }
    let out = lastDate + two(Math.trunc(r / 3600)) + ':' + two(Math.trunc((r % 3600) / 60)) + ':' + two(r % 60);
    if (m > 0) out += '.' + (m < 10 ? '00' : m < 100 ? '0' : '') + m;
    return out + 'Z';
  },
});

const SPAN_MAXIMUM = 100 * 366 * 86400;
const SPAN_UNITS = Object.assign(Object.create(null), { w: 604800, d: 86400, h: 3600, m: 60, s: 1 });

/** Durations in whole seconds (`7d`, `1d12h`), as `TimeSpan.swift`. */
export const TimeSpan = Object.freeze({
  /** The largest duration accepted: 100 years (of 366 days), in seconds. */
  maximum: SPAN_MAXIMUM,

  /** Parses `30s`, `15m`, `24h`, `7d`, `2w` or a sum such as `1d12h`: seconds, or null. */
  parse(text) {
    if (typeof text !== 'string' || text.length === 0 || text.charCodeAt(0) === 45) return null;
    let total = 0;
    let number = -1;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c >= 48 && c <= 57) {
        const n = (number < 0 ? 0 : number) * 10 + (c - 48);
        if (n > SPAN_MAXIMUM) return null;
        number = n;
      } else {
        const unit = SPAN_UNITS[text[i]];
        if (unit === undefined || number < 0) return null;
        const t = total + number * unit;
        if (t > SPAN_MAXIMUM) return null;
        total = t;
        number = -1;
      }
    }
    return number >= 0 ? null : total;
  },

  /** The shortest exact text for `seconds`: `7d`, `1d12h`, `0s` (no weeks). */
  format(seconds) {
    if (typeof seconds === 'bigint') {
      if (seconds === 0n) return '0s';
      let rest = seconds;
      let out = '';
      for (const [unit, size] of [['d', 86400n], ['h', 3600n], ['m', 60n], ['s', 1n]]) {
        if (rest >= size) {
          out += rest / size + unit;
          rest %= size;
        }
      }
      return out;
    }
    if (seconds === 0) return '0s';
    if (seconds > 9007199254740991) return TimeSpan.format(BigInt(seconds));
    let rest = seconds;
    let out = '';
    if (rest >= 86400) {
      out += Math.floor(rest / 86400) + 'd';
      rest %= 86400;
    }
    if (rest >= 3600) {
      out += Math.floor(rest / 3600) + 'h';
      rest %= 3600;
    }
    if (rest >= 60) {
      out += Math.floor(rest / 60) + 'm';
      rest %= 60;
    }
    if (rest >= 1) out += rest + 's';
    return out;
  },
});

/** The longest duration a policy may set, in seconds (36,600 days): Swift's `TimeSpan.maximum`. */
const MAX_SPAN_SECONDS = 100 * 366 * 86400;

/** A dotted version (`2.4.0`): its parts (1 to 4, each decimal digits within 64 bits), or null. */
function parseVersion(text) {
  const pieces = text.split('.');
  if (pieces.length > 4) return null;
  const parts = [];
  for (const piece of pieces) {
    if (piece.length === 0 || piece.charCodeAt(0) === 0x2d) return null;
    const n = parseInt64(piece, false);
    if (n === null) return null;
    parts.push(n);
  }
  return parts;
}

/** -1, 0 or 1: versions compared part by part, missing parts 0. */
function compareVersions(a, b) {
  const n = a.length > b.length ? a.length : b.length;
  for (let i = 0; i < n; i++) {
    const x = i < a.length ? a[i] : 0;
    const y = i < b.length ? b[i] : 0;
    if (x < y) return -1;
    if (y < x) return 1;
  }
  return 0;
}

// MARK: - JSON syntax (strict RFC 8259, located)

/**
 * How much a JSON text may hold: `bytes` (else `input-too-large`, with `hint`), `nodes` keys,
 * values and containers in all, counted as they are met (else `too-many-nodes`), and `depth`
 * levels, the root being level 1 (else `nesting-too-deep`).
 */
const FILE_LIMITS = Object.freeze({
  bytes: 1 << 20,
  nodes: 100000,
  depth: 64,
  hint: 'policy and scenario files are small; split the file or check that it is the right one',
});

const SCALAR = 0;
const SEQUENCE = 1;
const MAPPING = 2;

/**
 * A located JSON value, as `SyntaxNode`: a scalar (`text`: a string's decoded text, or a
 * number or literal as written; `plain` for the unquoted ones), a sequence (`items`) or a
 * mapping (`pairs`, in document order, each `[keyNode, valueNode]`).
 */
class SyntaxNode {
  constructor(kind, text, plain, items, line, column) {
    this.kind = kind;
    this.text = text;
    this.plain = plain;
    this.items = items;
    this.line = line;
    this.column = column;
  }

  get isNull() {
    return this.kind === SCALAR && this.plain && this.text === 'null';
  }

  get shapeName() {
    if (this.kind === SCALAR) return this.isNull ? 'null' : 'a scalar';
    return this.kind === SEQUENCE ? 'a list' : 'a mapping';
  }

  /** The value of `key` in a mapping (first match), or undefined. */
  get(key) {
    if (this.kind !== MAPPING) return undefined;
    for (const [k, v] of this.items) if (k.text === key) return v;
    return undefined;
  }
}

/** The first four bytes' verdict of `TextEncoding.wide`: a wide encoding's name, or null. */
function wideEncoding(b0, b1, b2, b3) {
  if (b0 === 0x00 && b1 === 0x00 && b2 === 0xfe && b3 === 0xff) return 'UTF-32 (big-endian, with a byte-order mark)';
  if (b0 === 0xff && b1 === 0xfe && b2 === 0x00 && b3 === 0x00) return 'UTF-32 (little-endian, with a byte-order mark)';
  if (b0 === 0xfe && b1 === 0xff) return 'UTF-16 (big-endian, with a byte-order mark)';
  if (b0 === 0xff && b1 === 0xfe) return 'UTF-16 (little-endian, with a byte-order mark)';
  if (b0 === 0x00 && b1 === 0x00 && b2 === 0x00 && b3 !== undefined && b3 !== 0) return 'UTF-32 (big-endian)';
  if (b0 !== undefined && b0 !== 0 && b1 === 0x00 && b2 === 0x00 && b3 === 0x00) return 'UTF-32 (little-endian)';
  if (b0 === 0x00 && b1 !== undefined && b1 !== 0 && b1 < 0x80) return 'UTF-16 (big-endian)';
  if (b0 !== undefined && b0 !== 0 && b0 < 0x80 && b1 === 0x00) return 'UTF-16 (little-endian)';
  return null;
}

/**
 * Parses JSON text (a string or UTF-8 bytes) into a located tree, within `limits` (the machine
 * document's unless given); null for no value at all.
 */
function parseJSON(input, limits = FILE_LIMITS) {
  let text;
  let head;
  let size;
  if (typeof input === 'string') {
    text = input;
    size = utf8Length(text);
    head = utf8Encode(text.slice(0, 4));
  } else {
    const bytes = input instanceof Uint8Array ? input : new Uint8Array(input);
    size = bytes.length;
    head = bytes;
    text = null;
    if (size <= limits.bytes) {
      const wide = wideEncoding(bytes[0], bytes[1], bytes[2], bytes[3]);
      if (wide === null) text = utf8Decode(bytes);
    }
  }
  if (size > limits.bytes) {
    throw refuse('input-too-large', `input is ${size} bytes, more than the limit of ${limits.bytes} bytes`, { line: 1, column: 1 }, limits.hint);
  }
  const wide = wideEncoding(head[0], head[1], head[2], head[3]);
  if (wide !== null) {
    throw refuse('unsupported-encoding', `the input is in ${wide}; only UTF-8 is read`, { line: 1, column: 1 }, 'convert it to UTF-8');
  }
  return new JSONReader(text, limits).document();
}

/** The reader of `JSONSyntax.swift`: the same values, the same refusals, in the same order. */
class JSONReader {
  constructor(text, limits) {
    this.s = text;
    this.limits = limits;
    this.n = text.length;
    this.i = 0;
    this.line = 1;
    this.lineStart = 0;
    /** Surrogate pairs since `lineStart` (so that columns count Unicode scalars). */
    this.pairs = 0;
    this.nodes = 0;
    /** The open containers: `{object, line, column}`. */
    this.stack = [];
  }

  get column() {
    return this.i - this.lineStart - this.pairs + 1;
  }

  location() {
    return { line: this.line, column: this.column };
  }

  syntax(message, at, help) {
    return refuse('invalid-json', message, at || this.location(), help);
  }

  endsInside(top) {
    const what = top.object ? 'object' : 'array';
    return this.syntax(`the JSON ends inside an ${what}`, null, `close the ${what} with \`${top.object ? '}' : ']'}\``);
  }

  skipSpace() {
    const s = this.s;
    while (this.i < this.n) {
      const c = s.charCodeAt(this.i);
      if (c === 0x20 || c === 0x09) this.i += 1;
      else if (c === 0x0a) this.newLine(this.i);
      else if (c === 0x0d) this.newLine(this.i + 1 < this.n && s.charCodeAt(this.i + 1) === 0x0a ? this.i + 1 : this.i);
      else return;
    }
  }

  newLine(breakIndex) {
    this.i = breakIndex + 1;
    this.line += 1;
    this.lineStart = this.i;
    this.pairs = 0;
  }

  invalidUTF8() {
    return refuse('invalid-utf8', 'the input is not valid UTF-8', this.location(), 'save the file as UTF-8');
  }

  /** How the character at the reader reads in a message; refuses invalid UTF-8 there. */
  found() {
    if (this.i >= this.n) return 'the end of the input';
    const c = this.s.charCodeAt(this.i);
    if (c >= 0x20 && c < 0x7f) return c === 0x60 ? 'a backtick' : '`' + this.s[this.i] + '`';
    if (c < 0x80) return `control character U+${c.toString(16).toUpperCase().padStart(4, '0')}`;
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = this.i + 1 < this.n ? this.s.charCodeAt(this.i + 1) : 0;
      if (d >= 0xdc00 && d <= 0xdfff) return '`' + this.s.slice(this.i, this.i + 2) + '`';
      throw this.invalidUTF8();
    }
    if (c >= 0xdc00 && c <= 0xdfff) throw this.invalidUTF8();
    return '`' + this.s[this.i] + '`';
  }

  document() {
    if (this.n > 0 && this.s.charCodeAt(0) === 0xfeff) {
      this.i = 1;
      this.lineStart = 1;
    }
    this.skipSpace();
    if (this.i >= this.n) return null;
    const root = this.value();
    this.skipSpace();
    if (this.i < this.n) {
      const what = this.found();
      throw this.syntax(
        `unexpected ${what} after the JSON value`, null,
        'a JSON document is one value; remove what follows it, or put the values in a list',
      );
    }
    return root;
  }

  /** Counts a node and checks the depth it would have. */
  count(at) {
    this.nodes += 1;
    if (this.nodes > this.limits.nodes) {
      throw refuse('too-many-nodes', `the document has more than ${this.limits.nodes} values`, at);
    }
    if (this.stack.length + 1 > this.limits.depth) {
      throw refuse('nesting-too-deep', `values are nested more than ${this.limits.depth} levels deep`, at);
    }
  }

  /** One value from the reader's position (after space), with its children. */
  value() {
    if (this.i >= this.n) {
      if (this.stack.length > 0) throw this.endsInside(this.stack[this.stack.length - 1]);
      throw this.syntax('the JSON ends early', null, 'give a value after the last `:`');
    }
    const at = this.location();
    this.count(at);
    const c = this.s.charCodeAt(this.i);
    if (c === 0x7b || c === 0x5b) return this.container(c === 0x7b, at);
    if (c === 0x22) return new SyntaxNode(SCALAR, this.string(), false, null, at.line, at.column);
    if (c === 0x74) return this.literal('true', at);
    if (c === 0x66) return this.literal('false', at);
    if (c === 0x6e) return this.literal('null', at);
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return this.number(at);
    const what = this.found();
    throw this.syntax(`expected a JSON value, found ${what}`);
  }

  container(object, at) {
    this.i += 1;
    const frame = { object, line: at.line, column: at.column, keys: object ? new Set() : null };
    this.stack.push(frame);
    const items = [];
    const closer = object ? 0x7d : 0x5d;
    this.skipSpace();
    if (this.i < this.n && this.s.charCodeAt(this.i) === closer) {
      this.i += 1;
      this.stack.pop();
      return new SyntaxNode(object ? MAPPING : SEQUENCE, null, false, items, at.line, at.column);
    }
    for (;;) {
      this.skipSpace();
      if (object) {
        const key = this.key(frame);
        this.skipSpace();
        if (this.i >= this.n || this.s.charCodeAt(this.i) !== 0x3a) {
          if (this.i >= this.n) throw this.endsInside(frame);
          const what = this.found();
          throw this.syntax(`expected \`:\` after the key, found ${what}`, null, 'write each member as `"key": value`');
        }
        this.i += 1;
        this.skipSpace();
        items.push([key, this.value()]);
      } else {
        items.push(this.value());
      }
      this.skipSpace();
      const b = this.i < this.n ? this.s.charCodeAt(this.i) : -1;
      if (b !== 0x2c && b !== closer) {
        if (this.i >= this.n) throw this.endsInside(frame);
        const what = this.found();
        throw this.syntax(
          `expected \`,\` or \`${object ? '}' : ']'}\` after ${object ? 'a member' : 'an element'}, found ${what}`, null,
          object ? 'separate members with `,`' : 'separate elements with `,`',
        );
      }
      if (b === closer) {
        this.i += 1;
        this.stack.pop();
        return new SyntaxNode(object ? MAPPING : SEQUENCE, null, false, items, at.line, at.column);
      }
      const comma = this.location();
      this.i += 1;
      this.skipSpace();
      if (this.i < this.n && this.s.charCodeAt(this.i) === closer) {
        throw this.syntax(`trailing comma before \`${object ? '}' : ']'}\``, comma);
      }
    }
  }

  /** A key in double quotes, checked against the object's earlier keys (scalar by scalar). */
  key(frame) {
    if (this.i >= this.n || this.s.charCodeAt(this.i) !== 0x22) {
      if (this.i >= this.n) throw this.endsInside(frame);
      const what = this.found();
      throw this.syntax(`expected a key in double quotes, found ${what}`, null, 'write each member as `"key": value`');
    }
    const at = this.location();
    this.count(at);
    const text = this.string();
    if (frame.keys.has(text)) {
      throw refuse('duplicate-key', `key \`${text}\` appears twice in the same mapping`, at, 'keep one of the two');
    }
    frame.keys.add(text);
    return new SyntaxNode(SCALAR, text, false, null, at.line, at.column);
  }

  literal(w, at) {
    for (let k = 0; k < w.length; k++) {
      if (this.i + k >= this.n || this.s.charCodeAt(this.i + k) !== w.charCodeAt(k)) {
        throw this.syntax(`expected \`${w}\``, at, "JSON's literals are `true`, `false` and `null`, in lower case");
      }
    }
    this.i += w.length;
    return new SyntaxNode(SCALAR, w, true, null, at.line, at.column);
  }

  digits() {
    const start = this.i;
    while (this.i < this.n) {
      const c = this.s.charCodeAt(this.i);
      if (c < 0x30 || c > 0x39) break;
      this.i += 1;
    }
    return this.i - start;
  }

  number(at) {
    const start = this.i;
    const help = 'write numbers such as `7`, `-1.5` or `2e3`';
    if (this.s.charCodeAt(this.i) === 0x2d) this.i += 1;
    const first = this.i;
    const n = this.digits();
    if (n === 0) throw this.syntax('a number needs digits after `-`', null, help);
    if (n > 1 && this.s.charCodeAt(first) === 0x30) {
      this.i = first;
      throw this.syntax('a number cannot start with 0', null, 'write numbers without leading zeros: `7`, not `07`');
    }
    if (this.i < this.n && this.s.charCodeAt(this.i) === 0x2e) {
      this.i += 1;
      if (this.digits() === 0) throw this.syntax('a number needs digits after `.`', null, help);
    }
    if (this.i < this.n && (this.s.charCodeAt(this.i) | 0x20) === 0x65) {
      this.i += 1;
      if (this.i < this.n && (this.s.charCodeAt(this.i) === 0x2b || this.s.charCodeAt(this.i) === 0x2d)) this.i += 1;
      if (this.digits() === 0) throw this.syntax('a number needs digits in its exponent', null, help);
    }
    return new SyntaxNode(SCALAR, this.s.slice(start, this.i), true, null, at.line, at.column);
  }

  /** A string from its opening quote: the decoded text. */
  string() {
    const s = this.s;
    const open = this.location();
    this.i += 1;
    let start = this.i;
    let out = '';
    while (this.i < this.n) {
      const c = s.charCodeAt(this.i);
      if (c === 0x22) {
        out += s.slice(start, this.i);
        this.i += 1;
        return out;
      }
      if (c === 0x5c) {
        out += s.slice(start, this.i);
        out += this.escape();
        start = this.i;
        continue;
      }
      if (c < 0x20) {
        if (c === 0x0a || c === 0x0d) {
          throw this.syntax('a line break inside a string', null, 'close the string with `"` before the line ends, or write the line break as `\\n`');
        }
        throw this.syntax(`the control character U+${c.toString(16).toUpperCase().padStart(4, '0')} must be escaped in a string`);
      }
      if (c >= 0xd800 && c <= 0xdfff) {
        const d = this.i + 1 < this.n ? s.charCodeAt(this.i + 1) : 0;
        if (c > 0xdbff || d < 0xdc00 || d > 0xdfff) throw this.invalidUTF8();
        this.i += 2;
        this.pairs += 1;
        continue;
      }
      this.i += 1;
    }
    throw this.syntax('a string is not closed', open, 'close it with `"`');
  }

  /** One escape from its backslash: the text it stands for. */
  escape() {
    const at = this.location();
    const help = "JSON's escapes are `\\\"`, `\\\\`, `\\/`, `\\b`, `\\f`, `\\n`, `\\r`, `\\t` and `\\u` with four hexadecimal digits";
    this.i += 1;
    if (this.i >= this.n) return ''; // the caller reports the string as not closed
    const c = this.s.charCodeAt(this.i);
    let simple = null;
    switch (c) {
      case 0x22: simple = '"'; break;
      case 0x5c: simple = '\\'; break;
      case 0x2f: simple = '/'; break;
      case 0x62: simple = '\b'; break;
      case 0x66: simple = '\f'; break;
      case 0x6e: simple = '\n'; break;
      case 0x72: simple = '\r'; break;
      case 0x74: simple = '\t'; break;
    }
    if (simple !== null) {
      this.i += 1;
      return simple;
    }
    if (c !== 0x75) {
      if (c < 0x20 || c >= 0x7f) {
        const what = this.found();
        throw this.syntax(`unknown escape: a backslash followed by ${what}`, at, help);
      }
      throw this.syntax(`unknown escape \`\\${this.s[this.i]}\``, at, help);
    }
    this.i += 1;
    const unit = this.hex4(at, help);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      if (!(this.i + 1 < this.n && this.s.charCodeAt(this.i) === 0x5c && this.s.charCodeAt(this.i + 1) === 0x75)) {
        throw this.loneSurrogate(unit, at);
      }
      const lowAt = this.location();
      this.i += 2;
      const low = this.hex4(lowAt, help);
      if (low < 0xdc00 || low > 0xdfff) throw this.loneSurrogate(unit, at);
      return String.fromCharCode(unit, low);
    }
    if (unit >= 0xdc00 && unit <= 0xdfff) throw this.loneSurrogate(unit, at);
    return String.fromCharCode(unit);
  }

  loneSurrogate(unit, at) {
    return this.syntax(`\`\\u${unit.toString(16)}\` is half of a surrogate pair, without its other half`, at);
  }

  hex4(at, help) {
    let v = 0;
    for (let k = 0; k < 4; k++) {
      const c = this.i + k < this.n ? this.s.charCodeAt(this.i + k) : -1;
      let d;
      if (c >= 0x30 && c <= 0x39) d = c - 0x30;
      else if (c >= 0x41 && c <= 0x46) d = c - 0x41 + 10;
      else if (c >= 0x61 && c <= 0x66) d = c - 0x61 + 10;
      else throw this.syntax('`\\u` needs four hexadecimal digits', at, help);
      v = (v << 4) | d;
    }
    this.i += 4;
    return v;
  }
}

/** Reads `input` as one JSON value: the root node; `empty-document` for no value at all. */
function readRoot(input, help) {
  let source = input;
  if (input !== null && typeof input === 'object' && !(input instanceof Uint8Array) && !(input instanceof ArrayBuffer)) {
    // A JavaScript value: read as the JSON it is written as, by the same rules as text.
    try {
      source = JSON.stringify(input);
    } catch (e) {
      throw refuse('invalid-json', `the value cannot be written as JSON: ${e && e.message}`, null);
    }
    if (source === undefined) throw refuse('invalid-json', 'the value cannot be written as JSON', null);
  } else if (typeof input !== 'string' && !(input instanceof Uint8Array) && !(input instanceof ArrayBuffer)) {
    throw refuse('wrong-type', 'the input must be JSON text, UTF-8 bytes or an object', null);
  }
  const root = parseJSON(source);
  if (root === null) throw refuse('empty-document', 'the input is empty', { line: 1, column: 1 }, help);
  return root;
}

// MARK: - Canonical JSON

/**
 * The canonical text of a value (docs/machine-format.md): keys sorted by their UTF-8 bytes, no
 * whitespace, integers (numbers or BigInts), strings escaped as RFC 8785. Objects are plain
 * objects (`null` prototype where keys come from input).
 */
function canonicalText(v) {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'boolean': return v ? 'true' : 'false';
    case 'number':
    case 'bigint': return String(v);
    case 'string': return quote(v);
  }
  if (Array.isArray(v)) return '[' + v.map(canonicalText).join(',') + ']';
  const keys = Object.keys(v).sort(compareUTF8);
  return '{' + keys.map((k) => quote(k) + ':' + canonicalText(v[k])).join(',') + '}';
}

// MARK: - Session state

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

// MARK: - The strict reader of states and events (SessionSyntax.swift, SyntaxReader.swift)

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

// MARK: - Outcome

/**
 * The result of evaluating one event: the decision (`allow`, `require_biometric`, `idp_login`,
 * `wipe`, or null), why, what to tell the user, and the session's new state.
 */
export class Outcome {
  constructor() {
    /** @type {string|null} */
    this.decision = null;
    this.reason = '';
    this.message = '';
    /** @type {ReadonlyArray<string>} */
    this.notices = NOTICE_LISTS[0];
    /** @type {string|null} */
    this.scope = null;
    /** @type {string|null} */
    this.authMode = null;
    /** @type {number|bigint|null} seconds */
    this.noticeDelay = null;
    this.transition = -1;
    /** @type {SessionState} */
    this.state = null;
    this._notices = 0;
  }

  /** The JSON text Swift writes for this outcome, byte for byte. */
  toJSONString() {
    return (
      '{"auth_mode":' + (this.authMode === null ? 'null' : quote(this.authMode)) +
      ',"decision":' + (this.decision === null ? 'null' : quote(this.decision)) +
      ',"message":' + quote(this.message) +
      ',"notice_delay":' + (this.noticeDelay === null ? 'null' : '"' + TimeSpan.format(this.noticeDelay) + '"') +
      ',"notices":' + noticesJSON(this) +
      ',"reason":' + quote(this.reason) +
      ',"scope":' + (this.scope === null ? 'null' : quote(this.scope)) +
      ',"state":' + this.state.toJSONString() +
      ',"transition":' + this.transition + '}'
    );
  }

  /** The JSON value of this outcome, members in Swift's order: `JSON.stringify` writes Swift's bytes. */
  toJSON() {
    return {
      auth_mode: this.authMode,
      decision: this.decision,
      message: this.message,
      notice_delay: this.noticeDelay === null ? null : TimeSpan.format(this.noticeDelay),
      notices: [...this.notices],
      reason: this.reason,
      scope: this.scope,
      state: this.state.toJSON(),
      transition: this.transition,
    };
  }
}

function noticesJSON(o) {
  // `notices` is the shared list of the outcome's bits unless a caller replaced it.
  if (o.notices === NOTICE_LISTS[o._notices]) return NOTICE_JSON[o._notices];
  return '[' + o.notices.map(quote).join(',') + ']';
}

// MARK: - The machine

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
    } else if (['version', 'boolean', 'integer', 'duration', 'string'].includes(kind)) {
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
    case C_ONE_OF: return { ...fact(), op: 'one_of', values: c.values, negated: c.negated };
    case C_COMPARE: return { ...fact(), op: 'compare', comparison: COMPARISONS[c.cmp], value: c.value };
    case C_VERSION: return { ...fact(), op: 'compare_version', comparison: COMPARISONS[c.cmp], value: c.value.join('.') };
    case C_AND: return { op: 'and', left: conditionValue(c.left), right: conditionValue(c.right) };
    case C_OR: return { op: 'or', left: conditionValue(c.left), right: conditionValue(c.right) };
    default: return { op: 'not', operand: conditionValue(c.left) };
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
          check: this._describe(t.guard),
          facts: this._facts(t.guard, before, e),
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

  /** A guard in policy vocabulary (`StateMachine.wording`'s sentence). */
  _describe(g) {
    const span = () => TimeSpan.format(g.n);
    switch (g.code) {
      case 0: return 'otherwise';
      case 1: return 'the device failed its integrity check';
      case 2: return `the clock went back more than ${span()} before the highest time seen`;
      case 3: return "the event names another user than the session's";
      case 4: return "the event comes from another device than the session's";
      case 5: return `more than ${span()} since the last IdP login`;
      case 6: return `more than ${span()} since the last activity`;
      case 7: return `more than ${span()} since the last online validation`;
      case 8: return 'the session records no auth mode';
      case 9: return 'the auth mode is password or pin';
      case 10: return 'the auth mode is not one of ' + g.modes.map((m) => '`' + m + '`').join(', ');
      case 11: return 'the device keystore is not hardware-backed';
      case 12: return 'the biometric path is locked until the next IdP login';
      case 13: return `the auth mode is \`${g.w}\``;
      case 14: return `this is failure ${g.n} or later on the ${g.w} path`;
      case 15: return 'the device is offline';
      case 16: return `the refresh failed with cause \`${g.w}\``;
      case 17: return 'the client reports unsynced items';
      case 18: return 'the app that created the session is not in `cross_app.apps`';
      case 19: return `rule \`${this._rules[g.n].name}\` needs a fact the event does not report`;
      case 20: return `rule \`${this._rules[g.n].name}\`: ${this._rules[g.n].text}`;
      default: {
        const sentence = this._describe(g.trigger);
        if (g.inner.code === G.always) return `${sentence}, and the new login passes every check`;
        return `${sentence}, and for the new login: ${this._describe(g.inner)}`;
      }
    }
  }

  /** The facts a guard looked at (`StateMachine.facts`). */
  _facts(g, s, e) {
    const highest = highestSeen(s);
    const now = highest !== null && highest > e.time ? highest : e.time;
    const sinceText = (t, what) => {
      if (t === null) return `no ${what} recorded`;
      const d = Math.trunc((now - t) / 1000);
      return d >= 0 ? `${TimeSpan.format(d)} since the ${what}` : `the ${what} is ${TimeSpan.format(-d)} in the future`;
    };
    const show = (v) => (v === null ? 'not reported' : '`' + v + '`');
    const named = (v) => (v === null ? 'none' : '`' + v + '`');
    switch (g.code) {
      case 0: return '';
      case 1: return `integrity ${show(e.device.integrity)}`;
      case 2: return `event time ${Timestamp.format(e.time)}, highest time seen ${highest === null ? 'none' : Timestamp.format(highest)}`;
      case 4: return `event device ${named(e.device.id)}, session device ${named(s.device)}`;
      case 3: return `event user ${named(e.user)}, session user ${named(s.user)}`;
      case 5: return sinceText(s.lastIdPLogin, 'last IdP login');
      case 6: return sinceText(s.lastActivity !== null ? s.lastActivity : s.lastIdPLogin, 'last activity');
      case 7: return sinceText(s.lastOnline !== null ? s.lastOnline : s.lastIdPLogin, 'last online validation');
      case 8:
      case 9:
      case 10:
      case 13: return `auth mode ${show(s.authMode)}`;
      case 11: return `keystore ${show(e.device.keystore)}`;
      case 12: return `locked: ${s.biometricLocked}, auth mode ${show(s.authMode)}`;
      case 14: {
        const f = s.failures;
        const n = g.w === 'biometric' ? f.biometric : g.w === 'offline_login' ? f.offlineLogin : f.idpLogin;
        return `this is failure ${typeof n === 'bigint' ? n + 1n : n + 1}`;
      }
      case 15: return `network ${show(e.network)}`;
      case 16: return `cause ${show(e.cause)}`;
      case 17: return `unsynced items: ${e.unsyncedItems === null ? 0 : e.unsyncedItems}`;
      case 18: return `app ${show(e.appID)}`;
      case 19:
      case 20: {
        const t = truth(this._rules[g.n].condition, s, e, now);
        return t === YES ? 'holds' : t === NO ? 'does not hold' : `\`${t}\` is not reported`;
      }
      default: {
        const first = this._facts(g.trigger, s, e);
        if (!this._holds(g.trigger, s, e, now, highest)) return first;
        const rest = this._facts(g.inner, cleared(highest, s.biometricLocked), e);
        return rest === '' ? first : `${first}; ${rest}`;
      }
    }
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

// MARK: - Signed machines (docs/envelope.md)

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

    // 2. Three base64url segments, after ASCII white space at both ends.
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

    // 3. The header: exactly `alg`, `kid` and `typ`, each a string.
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

    // 4 to 8: the type, the algorithm, the key and the signature. `typ`, `alg`, `kid` (and
    // `format`, `digest`) are compared byte for byte; names (`policy`) by string equality.
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
      machine = PolicyMachine.fromDocument(members.machine.text, 'machine.json');
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
}

/** ASCII bytes as a string, in chunks (an envelope may be megabytes). */
function latin(b, start, end) {
  let out = '';
  for (let i = start; i < end; i += 8192) out += String.fromCharCode.apply(null, b.subarray(i, Math.min(end, i + 8192)));
  return out;
}
