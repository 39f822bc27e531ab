// Times and durations: RFC 3339 timestamps (`Timestamp`), spans (`TimeSpan`), version numbers
// for `app_version` conditions.

import { parseInt64 } from './text.mjs';

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

export { EARLIEST, LATEST, MAX_SPAN_SECONDS, compareVersions, parseVersion };
