// Writes the seed corpus and the dictionary of a fuzz target from the repository's own files:
//   node Fuzz/seeds.mjs TARGET OUT_DIR DICT_FILE
// FuzzPolicy: the shipped and conformance policies and the bad-policy corpus; FuzzScenarios: the
// shipped scenario files; FuzzMachine: the conformance machines, documents and envelopes;
// FuzzStateEvent and FuzzRequestBody: states, events and requests taken
// from the conformance vectors (spread over every policy) and the server's example bodies.
import { readFileSync, readdirSync, writeFileSync, mkdirSync, existsSync, statSync } from "node:fs";
import { join } from "node:path";

const [target, out, dictFile] = process.argv.slice(2);
if (!target || !out || !dictFile) {
  console.error("usage: node Fuzz/seeds.mjs TARGET OUT_DIR DICT_FILE");
  process.exit(64);
}
const root = new URL("..", import.meta.url).pathname;
mkdirSync(out, { recursive: true });
const seeds = [];
const files = (dir, ext) =>
  existsSync(join(root, dir))
    ? readdirSync(join(root, dir))
        .filter((f) => ext.some((e) => f.endsWith(e)) && statSync(join(root, dir, f)).isFile())
        .sort()
        .map((f) => readFileSync(join(root, dir, f), "utf8"))
    : [];

function vectors(every) {
  const lines = [];
  for (const f of readdirSync(join(root, "spec/conformance/vectors")).sort()) {
    const all = readFileSync(join(root, "spec/conformance/vectors", f), "utf8").split("\n").filter(Boolean);
    for (let i = 0; i < all.length; i += every) lines.push(JSON.parse(all[i]));
  }
  return lines;
}

switch (target) {
  case "FuzzPolicy":
    seeds.push(...files("policies", [".yaml"]), ...files("spec/conformance/policies", [".yaml"]));
    seeds.push(...files("Tests/Fixtures/bad-policies", [".yaml", ".json"]));
    break;
  case "FuzzScenarios":
    seeds.push(...files("examples", [".yaml"]), ...files("Tests/Fixtures/check", [".yaml"]));
    break;
  case "FuzzMachine": {
    seeds.push(...files("spec/conformance/machines", [".json"]));
    const lines = (f) => readFileSync(join(root, "spec/conformance", f), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    for (const d of lines("documents.jsonl")) if (typeof d.document === "string") seeds.push(d.document);
    for (const e of lines("envelopes.jsonl")) if (typeof e.envelope === "string") seeds.push(e.envelope);
    break;
  }
  case "FuzzStateEvent":
    for (const v of vectors(97)) {
      seeds.push(JSON.stringify(v.state), JSON.stringify(v.event), JSON.stringify({ state: v.state, event: v.event }));
    }
    break;
  case "FuzzRequestBody":
    for (const v of vectors(131)) {
      seeds.push(JSON.stringify({ state: v.state, event: v.event }), JSON.stringify({ event: v.event }));
    }
    const items = vectors(500).map((v) => ({ state: v.state, event: v.event }));
    seeds.push(JSON.stringify({ items: items.slice(0, 3) }), JSON.stringify({ items }));
    seeds.push('{"pool":"acme","device":"d1","app":"com.acme.bank"}', '{"pool":"acme","ticket":"t-1"}');
    break;
  default:
    console.error(`unknown target ${target}: FuzzPolicy, FuzzScenarios, FuzzMachine, FuzzStateEvent, FuzzRequestBody`);
    process.exit(64);
}
seeds.forEach((s, i) => writeFileSync(join(out, `seed-${String(i).padStart(4, "0")}`), s));

// The dictionary: the words and punctuation the inputs are made of.
const words = new Set();
for (const s of seeds) {
  for (const m of s.matchAll(/"?[a-z][a-z0-9_.]{1,30}"?:?/g)) words.add(m[0]);
  for (const m of s.matchAll(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g)) words.add(m[0]);
}
const escape = (w) => w.replace(/\\/g, "\\\\").replace(/"/g, '\\"');
const dict = [...words].sort().slice(0, 2000).map((w, i) => `w${i}="${escape(w)}"`);
dict.push('p0="{"', 'p1="}"', 'p2="["', 'p3="]"', 'p4=": "', 'p5="- "', 'p6="\\x0A  "', 'p7="null"', 'p8="true"');
writeFileSync(dictFile, dict.join("\n") + "\n");
console.log(`${target}: ${seeds.length} seeds in ${out}, ${dict.length} dictionary entries`);
