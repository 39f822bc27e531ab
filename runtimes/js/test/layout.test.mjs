// The layout of the runtime's code (README.md, "Files"): the entry only re-exports, every
// module is at most 700 lines, and no function is longer than 120 lines. Functions are found by
// the code's formatting (a line that opens a function, method or arrow body with `{`, closed by
// a `}` at the same indentation), which is how every module here is written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const modules = readdirSync(root + 'src').filter((f) => f.endsWith('.mjs')).map((f) => 'src/' + f);
const MAX_FILE_LINES = 700;
const MAX_FUNCTION_LINES = 120;

const opens = /^(\s*)(?:export\s+)?(?:async\s+)?(?:function\b.*|(?:static\s+)?(?:get\s+|set\s+)?[#\w$]+\s*\([^;]*\)\s*|.*=>\s*)\{$/;
const keywords = new Set(['if', 'for', 'while', 'switch', 'catch', 'with']);

/** The functions of `text` longer than `limit` lines: `[{line, lines, head}]`. */
export function longFunctions(text, limit) {
  const lines = text.split('\n');
  const found = [];
  for (let i = 0; i < lines.length; i++) {
    const m = opens.exec(lines[i]);
    if (m === null) continue;
    const head = lines[i].trim();
    if (keywords.has(head.split(/[\s(]/)[0]) || head.startsWith('} ')) continue;
    const close = m[1] + '}';
    let j = i + 1;
    while (j < lines.length && !(lines[j].startsWith(close) && !/^\s/.test(lines[j].slice(m[1].length)))) j++;
    const length = j - i + 1;
    if (length > limit) found.push({ line: i + 1, lines: length, head });
  }
  return found;
}

test('the entry only re-exports the modules in src/', () => {
  const code = readFileSync(root + 'sessionpolicy.mjs', 'utf8').split('\n').filter((l) => l.trim() !== '' && !l.startsWith('//'));
  for (const line of code) assert.match(line, /^export \{ [\w, ]+ \} from '\.\/src\/[\w-]+\.mjs';$/, `sessionpolicy.mjs: not a re-export: ${line}`);
});

test(`every module is at most ${MAX_FILE_LINES} lines, no function over ${MAX_FUNCTION_LINES}`, () => {
  assert.ok(modules.length >= 10, `src/ has ${modules.length} modules`);
  const problems = [];
  for (const file of ['sessionpolicy.mjs', ...modules]) {
    const text = readFileSync(root + file, 'utf8');
    const count = text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length;
    if (count > MAX_FILE_LINES) problems.push(`${file}: ${count} lines, more than ${MAX_FILE_LINES}`);
    for (const f of longFunctions(text, MAX_FUNCTION_LINES)) problems.push(`${file}:${f.line}: a function of ${f.lines} lines: ${f.head}`);
  }
  assert.deepEqual(problems, []);
});

test('the function finder sees a long function', () => {
  const body = Array.from({ length: 130 }, () => '  x();').join('\n');
  assert.deepEqual(longFunctions(`function f() {\n${body}\n}\n`, 120).map((f) => f.lines), [132]);
  assert.deepEqual(longFunctions(`class A {\n  m(a) {\n  ${body}\n  }\n}\n`, 120).map((f) => f.lines), [132]);
  assert.deepEqual(longFunctions(`const g = (a) => {\n${body}\n};\n`, 120).map((f) => f.lines), [132]);
});
