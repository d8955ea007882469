#!/usr/bin/env node
// A minimal Persyk conformance adapter in Node.js (protocol 1; see docs/implementers/implementers.md).
//
// It implements "validate" honestly for a subset of the rules only: every line is terminated
// (REC-1, REC-16), blank lines are skipped (REC-15), strict UTF-8 (REC-2), one JSON value
// (REC-3) that is an object (REC-4), and the first record is a header (HDR-1, HDR-2). context
// and info fail with the first error of an invalid session (CTX-20) and answer "unsupported" for
// a valid one, so the runner reports those cases as unsupported rather than failed. It declares
// the "read" capability. expected-failures.txt lists the cases it fails, each with its reason.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const readline = require("node:readline");

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function diagnostic(code, line) {
  // Fixed texts only: a diagnostic never quotes the input (DIAG-1).
  return { code, line, message: `${code} (at line ${line})` };
}

function validate(args) {
  let file = args.session;
  if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, "session.jsonl");
  let bytes;
  try {
    bytes = fs.readFileSync(file);
  } catch {
    return { error: { code: "PATH_NOT_FOUND", message: "PATH_NOT_FOUND: no session at the path" } };
  }
  if (bytes.length === 0) return { valid: false, errors: [diagnostic("SESSION_EMPTY", 1)], truncated: false };
  const errors = [];
  let sawRecord = false; // the first record that is not a blank line must be the header
  let start = 0;
  for (let line = 1; start < bytes.length; line++) {
    let end = bytes.indexOf(0x0a, start);
    const terminated = end !== -1;
    if (!terminated) end = bytes.length;
    const record = bytes.subarray(start, end);
    start = end + 1;
    if (!terminated) { errors.push(diagnostic("RECORD_UNTERMINATED", line)); break; }
    if (/^[ \t\r]*$/.test(record.toString("latin1"))) continue; // a blank line is no record
    let text;
    try {
      text = decoder.decode(record);
    } catch {
      errors.push(diagnostic("RECORD_INVALID_UTF8", line));
      continue;
    }
    let value;
    const first = !sawRecord;
    sawRecord = true;
    try {
      value = JSON.parse(text);
    } catch {
      errors.push(diagnostic("RECORD_JSON_SYNTAX", line));
      continue;
    }
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      errors.push(diagnostic("RECORD_NOT_OBJECT", line));
    } else if (first && value.type !== "session") {
      errors.push(diagnostic("HEADER_NOT_FIRST", line));
    }
  }
  return { valid: errors.length === 0, errors: errors.slice(0, 100), truncated: errors.length > 100 };
}

// CTX-20: an invalid session has no context or info; the operation fails with its first error.
// For a valid session this example has no projection to offer, so it says "unsupported".
class Unsupported extends Error {}

function firstErrorOr(args, what) {
  const result = validate(args);
  if (result.error) return result;
  if (!result.valid) return { error: result.errors[0] };
  throw new Unsupported(`${what} of a valid session is not implemented`);
}

const OPERATIONS = {
  validate,
  context: (args) => firstErrorOr(args, "context"),
  info: (args) => firstErrorOr(args, "info"),
};

function answer(request) {
  if (request.cmd === "hello") {
    return {
      protocol: 1,
      implementation: { name: "node-example", version: "0.1.0", language: "javascript" },
      capabilities: ["read"],
    };
  }
  const op = OPERATIONS[request.op];
  if (!op) return { seq: request.seq, unsupported: true, message: `${request.op} is not implemented` };
  try {
    return { seq: request.seq, result: op(request.args) };
  } catch (err) {
    if (err instanceof Unsupported) return { seq: request.seq, unsupported: true, message: err.message };
    return { seq: request.seq, internal: { message: String(err && err.message) } };
  }
}

// stdout carries protocol lines only; anything else goes to stderr.
const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
input.on("line", (line) => {
  const request = JSON.parse(line);
  if (request.cmd === "stop") {
    input.close();
    process.exit(0);
  }
  process.stdout.write(JSON.stringify(answer(request)) + "\n");
});
