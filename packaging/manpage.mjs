// Writes a manual page (man(7), section 1) for a swift-argument-parser command from what the
// command says of itself:
//   BINARY --experimental-dump-help | node packaging/manpage.mjs VERSION DATE > NAME.1
// DATE as YYYY-MM-DD. One page per program: its options, then each subcommand with its own.
// The text is the commands' --help text, so the pages never say other than the programs.
// No dependencies (Node 18+).
import { readFileSync } from 'node:fs';

const [version, date] = process.argv.slice(2);
if (!version || !date) {
  console.error('usage: BINARY --experimental-dump-help | node manpage.mjs VERSION YYYY-MM-DD');
  process.exit(64);
}
const root = JSON.parse(readFileSync(0, 'utf8')).command;

/** Text for roff: backslashes escaped, no line starting with a control character. */
function text(s) {
  return String(s)
    .replace(/\\/g, '\\e')
    .split('\n')
    .map((line) => (/^[.']/.test(line) ? '\\&' + line : line))
    .join('\n');
}
/** An option's or an argument's name as typed: `--port`, `-h`. */
function flag(name) {
  return (name.kind === 'long' ? '--' : '-') + name.name;
}
function bold(s) {
  return '\\fB' + text(s).replace(/-/g, '\\-') + '\\fR';
}
function italic(s) {
  return '\\fI' + text(s) + '\\fR';
}
/** The discussion's paragraphs (swift-argument-parser joins continued lines already). */
function paragraphs(s) {
  return s ? s.split(/\n+/).map((p) => '.PP\n' + text(p.trim())).join('\n') + '\n' : '';
}
function argument(a) {
  let head;
  if (a.kind === 'positional') {
    head = italic(a.valueName) + (a.isRepeating ? ' ...' : '');
  } else {
    head = (a.names || []).map((n) => bold(flag(n))).join(', ');
    if (a.kind === 'option') head += ' ' + italic(a.valueName);
  }
  let body = text(a.abstract || '');
  if (a.discussion) body += '\n' + text(a.discussion);
  if (a.defaultValue !== undefined) body += '\n(default: ' + text(a.defaultValue) + ')';
  return '.TP\n' + head + '\n' + body + '\n';
}
function synopsis(path, command) {
  const shown = (command.arguments || []).filter((a) => a.shouldDisplay);
  const parts = shown
    .filter((a) => a.kind === 'positional')
    .map((a) => (a.isOptional ? '[' + italic(a.valueName) + ']' : italic(a.valueName)) + (a.isRepeating ? ' ...' : ''));
  const subcommands = (command.subcommands || []).filter((c) => c.shouldDisplay && c.commandName !== 'help');
  return '.B ' + path + '\n' + (subcommands.length ? italic('COMMAND') + ' ' : '') + '[' + italic('OPTIONS') + '] ' + parts.join(' ') + '\n';
}
function options(command) {
  return (command.arguments || []).filter((a) => a.shouldDisplay).map(argument).join('');
}

const name = root.commandName;
let out = `.TH ${name.toUpperCase().replace(/-/g, '\\-')} 1 "${date}" "SessionPolicy ${version}" "User Commands"\n`;
// Left-aligned, no hyphenation: names, paths and URLs stay whole.
out += '.nh\n.ad l\n';
out += `.SH NAME\n${name.replace(/-/g, '\\-')} \\- ${text(root.abstract || '')}\n`;
out += '.SH SYNOPSIS\n' + synopsis(name, root);
out += '.SH DESCRIPTION\n' + (paragraphs(root.discussion) || '.PP\n' + text(root.abstract || '') + '\n');
out += '.SH OPTIONS\n' + options(root);
const subcommands = (root.subcommands || []).filter((c) => c.shouldDisplay && c.commandName !== 'help');
if (subcommands.length) {
  out += '.SH COMMANDS\n';
  for (const c of subcommands) {
    out += `.SS "${name} ${c.commandName}"\n` + text(c.abstract || '') + '\n';
    out += '.PP\n' + synopsis(`${name} ${c.commandName}`, c);
    out += paragraphs(c.discussion) + options(c);
  }
}
const others = ['policyctl', 'policyctl-serve', 'policyctl-sessions'].filter((n) => n !== name);
out += '.SH SEE ALSO\n' + others.map((n) => bold(n) + '(1)').join(', ') + ';\n/usr/share/doc/sessionpolicy/packages.md\n';
process.stdout.write(out);
