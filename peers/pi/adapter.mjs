#!/usr/bin/env node
// A Persyk conformance adapter (protocol 1, docs/implementers/protocol.md) for pi's session manager:
// @mariozechner/pi-coding-agent, pinned in package-lock.json (`npm ci` in this folder).
//
// The read operations are answered by pi's own code: loadEntriesFromFile (the loader
// SessionManager.open uses), migrateSessionEntries, and a SessionManager holding those entries
// (leaf selection with branch()/resetLeaf(), buildSessionContext(), getBranch(), getLabel(),
// getSessionName(), getLeafId()). The adapter translates only what it must; README.md lists
// every translation. The append operations are not declared: README.md says why.
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";

// pi's module logs nothing on stdout, but stdout is the protocol channel: keep it that way.
console.log = (...args) => console.error(...args);

const PACKAGE = "@mariozechner/pi-coding-agent";
let INDEX;
try {
  INDEX = new URL(import.meta.resolve(PACKAGE));
} catch {
  console.error(`${PACKAGE} is not installed beside this adapter: run \`npm ci\` in ${new URL(".", import.meta.url).pathname}`);
  process.exit(1);
}
// loadEntriesFromFile is exported by pi's session-manager module but not re-exported by the
// package index; SessionManager, buildSessionContext and migrateSessionEntries are the same
// objects the index re-exports. Importing the module alone starts in 0.1 s instead of 1.2 s.
const pi = await import(new URL("./core/session-manager.js", INDEX).href);
const { convertToLlm } = await import(new URL("./core/messages.js", INDEX).href);
const PI_VERSION = JSON.parse(readFileSync(new URL("../package.json", INDEX), "utf8")).version;

// Translation 1: the header version. A Persyk v1 session has pi's version 3 tree (id, parentId);
// pi's own version 1 is its legacy linear format, which migrateSessionEntries would re-id.
const PERSYK_VERSION = 1;

function diagnostic(code, line) {
  // Fixed texts only: a diagnostic never quotes the input (DIAG-1).
  const result = { code, message: `${code}: pi refuses to open this file as a session` };
  if (line !== undefined) result.line = line;
  return result;
}

class Refusal extends Error {
  constructor(error) {
    super(error.code);
    this.error = error;
  }
}

// Translation 2: the session layout. A Persyk session is a directory holding session.jsonl; pi
// keeps each session as one <timestamp>_<uuid>.jsonl file. A path that names nothing is the
// adapter's PATH_NOT_FOUND (pi's loader answers [] and SessionManager.open would create it).
function sessionFile(session) {
  let file = session;
  try {
    if (statSync(file).isDirectory()) file = join(file, "session.jsonl");
    statSync(file);
  } catch {
    throw new Refusal({ code: "PATH_NOT_FOUND", message: "PATH_NOT_FOUND: no session at the path" });
  }
  return file;
}

// Translation 3: why pi refused. loadEntriesFromFile answers [] (and SessionManager.open then
// starts a fresh session over the file) when no line parses or the first parsed record is not a
// header with a string id. pi gives no reason and no line; the adapter names the line pi took
// as its header candidate, reading the lines the way pi's loader does (skip blank, skip what
// JSON.parse refuses).
function refusalOf(content) {
  if (!content.trim()) return diagnostic("SESSION_EMPTY");
  const lines = content.split("\n");
  let firstNonBlank;
  for (let index = 0; index < lines.length; index++) {
    if (!lines[index].trim()) continue;
    firstNonBlank ??= index + 1;
    let value;
    try {
      value = JSON.parse(lines[index]);
    } catch {
      continue;
    }
    return diagnostic(value?.type === "session" ? "HEADER_INVALID" : "HEADER_NOT_FIRST", index + 1);
  }
  return diagnostic("RECORD_JSON_SYNTAX", firstNonBlank);
}

// Open a session the way SessionManager.setSessionFile does (load, migrate, index), in memory:
// SessionManager.open would rewrite the file after a migration, and a read writes nothing.
function open(session) {
  const file = sessionFile(session);
  const entries = pi.loadEntriesFromFile(file);
  if (entries.length === 0) throw new Refusal(refusalOf(readFileSync(file, "utf8")));
  const stored = entries[0];
  const header = stored.version === PERSYK_VERSION
    ? { ...stored, version: pi.CURRENT_SESSION_VERSION } : stored;
  entries[0] = header;
  pi.migrateSessionEntries(entries);
  const manager = pi.SessionManager.inMemory(process.cwd());
  // These three statements are setSessionFile's body for a loaded file, minus the read.
  manager.fileEntries = entries;
  manager.sessionId = header.id;
  manager._buildIndex();
  return { manager, stored, header };
}

function validate(args) {
  // pi has no validator: a session is valid for pi when pi opens it and builds its context at
  // the default leaf, which is what `pi --session FILE` does on resume.
  open(args.session).manager.buildSessionContext();
  return { valid: true, errors: [], truncated: false };
}

function produces(entry, message) {
  return (entry.type === "message" && entry.message === message)
    || (entry.type === "custom_message" && message.role === "custom"
      && message.customType === entry.customType && message.content === entry.content)
    || (entry.type === "compaction" && message.role === "compactionSummary")
    || (entry.type === "branch_summary" && message.role === "branchSummary");
}

// The entry that produced `message`: the first unused one on the path. A message entry
// produces only its own message object, so those are looked up by identity; the few other
// kinds are scanned in path order. (A scan of the whole path for every message was quadratic:
// 21 s at 30,000 entries.)
function attribution(path) {
  const byMessage = new Map();
  for (const entry of path) {
    if (entry.type === "message" && !byMessage.has(entry.message)) {
      byMessage.set(entry.message, entry);
    }
  }
  const others = path.filter((entry) => entry.type !== "message");
  const used = new Set();
  return (message) => {
    const own = byMessage.get(message);
    const found = own !== undefined && !used.has(own)
      ? own
      : others.find((entry) => !used.has(entry) && produces(entry, message));
    if (found !== undefined) used.add(found);
    return found;
  };
}

// Translation 4: pi's context holds AgentMessages without entry ids; the adapter finds, on the
// path pi walked, the entry each message came from and reports it in the history view's shape.
function historyItem(message, entry) {
  if (entry?.type === "custom_message") {
    const item = { id: entry.id, type: "custom_message", customType: message.customType,
      content: message.content, display: message.display };
    if (message.details !== undefined) item.details = message.details;
    return item;
  }
  return { id: entry?.id ?? "unattributed", type: "message", message };
}

class Unsupported extends Error {}

function context(args) {
  const view = args.view ?? "history";
  // pi's provider-specific conversion lives in pi-ai's providers and needs a model.
  if (view !== "history" && view !== "generic") throw new Unsupported(`pi has no ${view} view`);
  const { manager } = open(args.session);
  if (args.leaf === null) manager.resetLeaf();
  else if (args.leaf !== undefined) {
    try {
      manager.branch(args.leaf); // throws "Entry ... not found" for an id that names no entry
    } catch {
      throw new Refusal({ code: "LEAF_NOT_FOUND", message: "LEAF_NOT_FOUND: pi's branch() refused the leaf" });
    }
  }
  const leaf = manager.getLeafId();
  // The generic view is pi's own provider-neutral conversion, convertToLlm (custom messages
  // become user messages; user, assistant and tool results pass unchanged).
  if (view === "generic") return { leaf, messages: convertToLlm(manager.buildSessionContext().messages) };
  const path = leaf === null ? [] : manager.getBranch();
  const producer = attribution(path);
  const messages = manager.buildSessionContext().messages
    .map((message) => historyItem(message, producer(message)));
  // pi leaves custom state to each extension; its docs read it from getBranch() (the current
  // branch) or getEntries(). The adapter reports the current branch's custom entries.
  const custom = path.filter((entry) => entry.type === "custom")
    .map((entry) => ({ id: entry.id, customType: entry.customType, data: entry.data }));
  return { leaf, messages, custom };
}

function info(args) {
  const { manager, stored, header } = open(args.session);
  const entries = manager.getEntries();
  const labels = {};
  const byType = {};
  for (const entry of entries) {
    const label = manager.getLabel(entry.id);
    if (label !== undefined) labels[entry.id] = label;
    byType[entry.type] = (byType[entry.type] ?? 0) + 1;
  }
  return {
    header: header === stored ? header : { ...header, version: stored.version },
    name: manager.getSessionName() ?? null,
    archived: false, // Translation 5: pi has no archive flag.
    labels,
    counts: { entries: entries.length, byType },
    defaultLeaf: manager.getLeafId(),
  };
}

const OPERATIONS = { validate, context, info };

function internal(err) {
  // An exception of pi itself: its name and stack frames, never its message (which may quote
  // input, DIAG-1).
  const frames = String(err?.stack ?? "").split("\n").slice(1, 6).map((f) => f.trim());
  return { message: `pi threw ${err?.name ?? typeof err}`, traceback: frames.join("\n") };
}

function answer(request) {
  if (request.cmd === "hello") {
    return {
      protocol: 1,
      implementation: { name: "pi", version: PI_VERSION, language: "javascript",
        homepage: "https://github.com/badlogic/pi-mono" },
      capabilities: ["read"],
    };
  }
  const op = OPERATIONS[request.op];
  if (!op) return { seq: request.seq, unsupported: true, message: `pi has no ${request.op}` };
  try {
    return { seq: request.seq, result: op(request.args) };
  } catch (err) {
    if (err instanceof Unsupported) return { seq: request.seq, unsupported: true, message: err.message };
    if (err instanceof Refusal) {
      if (request.op === "validate" && err.error.code !== "PATH_NOT_FOUND") {
        return { seq: request.seq, result: { valid: false, errors: [err.error], truncated: false } };
      }
      return { seq: request.seq, result: { error: err.error } };
    }
    return { seq: request.seq, internal: internal(err) };
  }
}

const input = createInterface({ input: process.stdin, crlfDelay: Infinity });
input.on("line", (line) => {
  const request = JSON.parse(line);
  if (request.cmd === "stop") {
    input.close();
    process.exit(0);
  }
  process.stdout.write(`${JSON.stringify(answer(request))}\n`);
});
