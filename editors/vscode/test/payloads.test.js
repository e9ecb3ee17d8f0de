const test = require("node:test");
const assert = require("node:assert/strict");
const { DiagnosticForwarder, toForwarded, terminalPayload } = require("../out/payloads.js");

const range = { start: { line: 2, character: 4 }, end: { line: 2, character: 30 } };
const lint = { range, message: "ModuleNotFoundError: No module named 'distutils'", source: "pylint", severity: 0, code: { value: "E0401" } };
const ours = { range, message: "seen 3× before", source: "poimen", severity: 2 };

test("VS Code severities 0..3 become LSP 1..4 and code objects are unwrapped", () => {
  const out = toForwarded(lint);
  assert.equal(out.severity, 1);
  assert.equal(out.code, "E0401");
  assert.equal(out.source, "pylint");
  assert.deepEqual(out.range, range);
  assert.equal(toForwarded({ ...lint, severity: 3, code: 7 }).severity, 4);
  assert.equal(toForwarded({ ...lint, code: 7 }).code, 7);
});

test("poimen's own diagnostics are never forwarded", () => {
  const fwd = new DiagnosticForwarder();
  const params = fwd.payload("file:///a.py", [ours, lint]);
  assert.equal(params.diagnostics.length, 1);
  assert.equal(params.diagnostics[0].source, "pylint");
  assert.equal(fwd.payload("file:///b.py", [ours]), undefined);
});

test("an unchanged set is sent once; a cleared set is sent once", () => {
  const fwd = new DiagnosticForwarder();
  assert.ok(fwd.payload("file:///a.py", [lint]));
  assert.equal(fwd.payload("file:///a.py", [lint]), undefined);
  assert.deepEqual(fwd.payload("file:///a.py", []), { uri: "file:///a.py", diagnostics: [] });
  assert.equal(fwd.payload("file:///a.py", []), undefined);
  assert.ok(fwd.payload("file:///a.py", [lint]));
});

test("a flood of diagnostics on one uri is capped", () => {
  const fwd = new DiagnosticForwarder(5);
  const many = Array.from({ length: 50 }, (_, i) => ({ ...lint, message: `m${i}` }));
  assert.equal(fwd.payload("file:///a.py", many).diagnostics.length, 5);
});

test("terminal payload: unknown exit code is null, cwd optional", () => {
  assert.deepEqual(terminalPayload("make", undefined, "out"), { command: "make", exitCode: null, output: "out" });
  assert.deepEqual(terminalPayload("make", 2, "out", "/ws"), { command: "make", exitCode: 2, output: "out", cwd: "/ws" });
});
