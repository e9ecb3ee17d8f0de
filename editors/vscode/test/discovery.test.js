const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { discoverServer, ServerNotFound } = require("../out/discovery.js");

function tree() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "poimen-disc-"));
  const exe = (rel) => {
    const file = path.join(root, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, "#!/bin/sh\n");
    fs.chmodSync(file, 0o755);
    return file;
  };
  return { root, exe };
}

test("the setting wins over the workspace venv and PATH", () => {
  const { root, exe } = tree();
  const setting = exe("custom/mem");
  exe("ws/.venv/bin/mem");
  exe("bin/mem");
  const found = discoverServer({
    setting, workspaceFolders: [path.join(root, "ws")], pathEnv: path.join(root, "bin"), platform: "linux",
  });
  assert.deepEqual(found, { command: setting, origin: "setting" });
});

test("a setting that is not executable is an error naming the setting", () => {
  const { root } = tree();
  assert.throws(
    () => discoverServer({ setting: path.join(root, "nope"), workspaceFolders: [], pathEnv: "", platform: "linux" }),
    (err) => err instanceof ServerNotFound && /poimen\.server\.path/.test(err.message)
  );
});

test("the workspace venv comes before PATH, first folder first", () => {
  const { root, exe } = tree();
  exe("bin/mem");
  const second = exe("b/.venv/bin/mem");
  const found = discoverServer({
    setting: "", workspaceFolders: [path.join(root, "a"), path.join(root, "b")],
    pathEnv: path.join(root, "bin"), platform: "linux",
  });
  assert.deepEqual(found, { command: second, origin: "workspace" });
});

test("PATH is searched in order, skipping non-executables", () => {
  const { root, exe } = tree();
  fs.mkdirSync(path.join(root, "one"));
  fs.writeFileSync(path.join(root, "one", "mem"), "not executable");
  const two = exe("two/mem");
  const found = discoverServer({
    setting: "  ", workspaceFolders: [], platform: "linux",
    pathEnv: ["", path.join(root, "one"), path.join(root, "two")].join(":"),
  });
  assert.deepEqual(found, { command: two, origin: "path" });
});

test("nothing found says what to do", () => {
  assert.throws(
    () => discoverServer({ setting: "", workspaceFolders: ["/nonexistent"], pathEnv: "/nonexistent", platform: "linux" }),
    (err) => err instanceof ServerNotFound && /pip install poimen/.test(err.message) && /poimen\.server\.path/.test(err.message)
  );
});

test("windows looks for Scripts\\mem.exe", () => {
  const seen = [];
  assert.throws(() =>
    discoverServer({
      setting: "", workspaceFolders: ["C:\\ws"], pathEnv: "C:\\bin;D:\\tools", platform: "win32",
      isExecutable: (file) => (seen.push(file), false),
    })
  );
  assert.ok(seen[0].endsWith(path.join(".venv", "Scripts", "mem.exe")));
  assert.equal(seen.length, 3);
  assert.ok(seen.slice(1).every((f) => f.endsWith("mem.exe")));
});
