const test = require("node:test");
const assert = require("node:assert/strict");
const { serverSettings, serverArgs, SERVER_KEYS } = require("../out/settings.js");

test("empty and unset values are left to the server's defaults", () => {
  const cfg = { vault: "  ", project: "", budget: 800, generator: "embedded", generatorUrl: "", scope: null };
  const out = serverSettings((k) => cfg[k]);
  assert.deepEqual(out, { budget: 800, generator: "embedded" });
});

test("project defaults to the workspace name, an explicit one wins", () => {
  assert.equal(serverSettings(() => undefined, "shop").project, "shop");
  assert.equal(serverSettings((k) => (k === "project" ? "billing" : undefined), "shop").project, "billing");
});

test("client-only keys never reach the server", () => {
  const cfg = { "server.path": "/x/mem", "forward.terminal": false, vault: "/v" };
  assert.deepEqual(serverSettings((k) => cfg[k]), { vault: "/v" });
  assert.ok(!SERVER_KEYS.some((k) => k.includes(".")));
});

test("the vault goes before lsp, the user's arguments after it", () => {
  assert.deepEqual(serverArgs([], { vault: "/v" }), ["--vault", "/v", "lsp"]);
  assert.deepEqual(serverArgs(["--log-file", "/tmp/l"], { vault: "/v" }), ["--vault", "/v", "lsp", "--log-file", "/tmp/l"]);
  assert.deepEqual(serverArgs([], {}), ["lsp"]);
});
