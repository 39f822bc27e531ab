// JSON: the strict, located RFC 8259 reader (duplicate keys, lone surrogates, limits refused
// with Swift's codes) and the canonical writer the digest is taken over.

import { refuse } from './errors.mjs';
import { compareUTF8, quote, utf8Decode, utf8Encode, utf8Length } from './text.mjs';

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

export { MAPPING, SCALAR, SEQUENCE, canonicalText, parseJSON, readRoot };
