// Validate records against schemas/v1 with Ajv (JSON Schema 2020-12, ECMA-262 patterns).
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
const base = "https://persyk.dev/schemas/v1/";
const verdicts = input.checks.map(([name, text]) => ajv.getSchema(base + name)(JSON.parse(text)));
process.stdout.write(JSON.stringify(verdicts) + "\n");
