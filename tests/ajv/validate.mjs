// Validate records against schemas/v1 (or another folder: "base") with Ajv (JSON Schema 2020-12, ECMA-262 patterns).
// stdin: {"schemas": [schema, ...], "checks": [["header.json" | "entry.json", "<record text>"], ...]}
// stdout: one JSON array, true where the record is valid. Records are parsed by JSON.parse,
// as a JavaScript implementation would read them.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";

const require = createRequire(process.env.AJV_PREFIX + "/node_modules/");
const Ajv2020 = require("ajv/dist/2020").default;

const input = JSON.parse(readFileSync(0, "utf8"));
// strictSchema stays on: an unknown keyword would otherwise be ignored silently. strictTypes
// and strictRequired are style lints ("type" beside "required"; "required" naming a member that
// a sibling subschema defines), which change no verdict.
const ajv = new Ajv2020({ strict: true, strictTypes: false, strictRequired: false, unicodeRegExp: true });
for (const schema of input.schemas) ajv.addSchema(schema);
// "base" names the schema folder (default v1's); a name may carry a fragment
// ("events.json#/$defs/turn~1end", the dsh-v0 profile's per-type data), hence the $ref wrapper.
const base = input.base ?? "https://persyk.dev/schemas/v1/";
const compiled = new Map();
const validator = (name) => {
  if (!compiled.has(name)) compiled.set(name, ajv.compile({ $ref: base + name }));
  return compiled.get(name);
};
const verdicts = input.checks.map(([name, text]) => validator(name)(JSON.parse(text)));
process.stdout.write(JSON.stringify(verdicts) + "\n");
