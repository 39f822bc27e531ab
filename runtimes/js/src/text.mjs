// Text and integers: UTF-8 encoding and decoding, string equality scalar by scalar
// (docs/machine-format.md#string-equality), Swift's JSON quoting, 64-bit integer parsing.

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

export { HEX, INT64_MAX, compareUTF8, containsText, exact, increment, isSpaceOrNewline, parseInt64, quote, sameText, utf8Decode, utf8Length };
