const test = require("node:test");
const assert = require("node:assert/strict");
const { stripAnsi, OutputTail } = require("../out/text.js");

test("colour and cursor sequences are removed", () => {
  const raw = "\u001b[1;31merror\u001b[0m: linker `cc` not found\u001b[K\r\n";
  assert.equal(stripAnsi(raw), "error: linker `cc` not found\n");
});

test("OSC sequences (shell integration marks, titles) are removed", () => {
  const raw = "\u001b]633;C\u0007npm ERR! code ERESOLVE\n\u001b]0;title\u001b\\done\u001b]633;D;1\u0007";
  assert.equal(stripAnsi(raw), "npm ERR! code ERESOLVE\ndone");
});

test("a carriage-return rewrite keeps only the final text of the line", () => {
  assert.equal(stripAnsi("Downloading 10%\rDownloading 100%\nok"), "Downloading 100%\nok");
});

test("tabs and unicode survive", () => {
  const raw = "\t× This environment is externally managed\n╰─> To install";
  assert.equal(stripAnsi(raw), raw);
});

test("the tail keeps the end of a long stream", () => {
  const tail = new OutputTail(10);
  for (const chunk of ["aaaa", "bbbb", "cccc", "dddd"]) tail.push(chunk);
  assert.equal(tail.text(), "bbccccdddd");
  assert.equal(tail.truncated, true);
});

test("a short stream is kept whole", () => {
  const tail = new OutputTail(100);
  tail.push("one\n");
  tail.push("two\n");
  assert.equal(tail.text(), "one\ntwo\n");
  assert.equal(tail.truncated, false);
});
