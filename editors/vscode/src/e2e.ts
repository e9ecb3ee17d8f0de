/** Test-only activation path (POIMEN_E2E_PLAN=plan.json): drives the editor like a user
 * inside the extension host and appends one JSON line per step to the plan's results file.
 * tests/e2e/test_vscode.py writes the plan, takes screenshots when asked, and reads the results. */
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import type { PoimenApi } from "./extension";
import { OWN_SOURCE, Range } from "./payloads";

interface Plan {
  results: string;
  acks: string;
  document: string;
  diagnostic: { range: Range; message: string; source: string; code?: string };
  terminal?: { command: string; cwd: string; frameDocument: string };
  timeoutMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function toRange(r: Range): vscode.Range {
  return new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character);
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

function hoverText(hovers: vscode.Hover[] | undefined): string | undefined {
  const parts = (hovers ?? []).flatMap((h) =>
    h.contents.map((c) => (typeof c === "string" ? c : "value" in c ? c.value : ""))
  );
  const card = parts.find((p) => /^(Tier [123]|No match)/.test(p.trimStart()));
  return card;
}

class Recorder {
  constructor(private readonly plan: Plan) {}

  write(step: string, data: Record<string, unknown> = {}): void {
    fs.appendFileSync(this.plan.results, JSON.stringify({ step, ...data }) + "\n");
  }

  /** Tell the test a view is on screen and wait until it has taken its screenshot. */
  async shown(step: string): Promise<void> {
    await sleep(800); // let the workbench paint
    this.write(step);
    const ack = path.join(this.plan.acks, step);
    await until(`ack ${step}`, this.plan.timeoutMs, async () => (fs.existsSync(ack) ? true : undefined));
  }
}

async function hoverCard(uri: vscode.Uri, at: vscode.Position, timeoutMs: number): Promise<string> {
  return until("a tier-labelled hover", timeoutMs, async () =>
    hoverText(await vscode.commands.executeCommand<vscode.Hover[]>("vscode.executeHoverProvider", uri, at))
  );
}

async function answerEditor(known: Set<string>, timeoutMs: number): Promise<vscode.TextEditor> {
  return until("the answer document", timeoutMs, async () =>
    vscode.window.visibleTextEditors.find(
      (e) => !known.has(e.document.uri.toString()) && /Tier [123]|No match/.test(e.document.getText())
    )
  );
}

async function whatDoWeKnow(uri: vscode.Uri, range: vscode.Range, rec: Recorder, plan: Plan): Promise<void> {
  const actions = await until("code actions", plan.timeoutMs, async () => {
    const found = await vscode.commands.executeCommand<vscode.CodeAction[]>(
      "vscode.executeCodeActionProvider", uri, range
    );
    return found?.some((a) => a.title.startsWith("What do we know")) ? found : undefined;
  });
  rec.write("code-actions", { titles: actions.map((a) => a.title) });
  const action = actions.find((a) => a.title.startsWith("What do we know"))!;
  const known = new Set(vscode.window.visibleTextEditors.map((e) => e.document.uri.toString()));
  if (action.command) {
    await vscode.commands.executeCommand(action.command.command, ...(action.command.arguments ?? []));
  }
  const editor = await answerEditor(known, plan.timeoutMs);
  rec.write("answer", { uri: editor.document.uri.toString(), text: editor.document.getText() });
  await rec.shown("answer-shown");
}

/** "Remember how this was fixed…": the input box opens; the test types the lesson into it. */
async function remember(uri: vscode.Uri, range: vscode.Range, rec: Recorder): Promise<void> {
  const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>(
    "vscode.executeCodeActionProvider", uri, range
  );
  const action = actions.find((a) => a.title.startsWith("Remember how this was fixed"));
  if (!action?.command) throw new Error("no Remember code action");
  const pending = vscode.commands.executeCommand(action.command.command, ...(action.command.arguments ?? []));
  await rec.shown("remember-prompt");
  const result = (await pending) as Record<string, unknown> | undefined;
  rec.write("remember", { verdict: result?.verdict ?? null, parents: result?.parents ?? null });
}

async function terminalFailure(plan: Plan, rec: Recorder): Promise<void> {
  const spec = plan.terminal!;
  const terminal = vscode.window.createTerminal({ name: "e2e", cwd: spec.cwd, shellPath: "/bin/bash" });
  terminal.show();
  const integration = await until("shell integration", plan.timeoutMs, async () => terminal.shellIntegration);
  const ended = new Promise<vscode.TerminalShellExecutionEndEvent>((resolve) => {
    const sub = vscode.window.onDidEndTerminalShellExecution((e) => {
      if (e.terminal === terminal) {
        sub.dispose();
        resolve(e);
      }
    });
  });
  integration.executeCommand(spec.command);
  const end = await ended;
  rec.write("terminal-end", { command: end.execution.commandLine.value, exitCode: end.exitCode ?? null });
  const frameUri = vscode.Uri.file(spec.frameDocument);
  const doc = await vscode.workspace.openTextDocument(frameUri);
  await vscode.window.showTextDocument(doc, { preview: false });
  const own = await until("poimen's diagnostic from the terminal failure", plan.timeoutMs, async () => {
    const mine = vscode.languages.getDiagnostics(frameUri).filter((d) => d.source === OWN_SOURCE);
    return mine.length ? mine : undefined;
  });
  const card = await hoverCard(frameUri, own[0].range.start, plan.timeoutMs);
  rec.write("terminal-answer", {
    diagnostics: own.map((d) => ({ message: d.message, line: d.range.start.line, severity: d.severity })),
    hover: card,
  });
  const editor = await vscode.window.showTextDocument(doc, { preview: false });
  editor.selection = new vscode.Selection(own[0].range.start, own[0].range.start);
  await vscode.commands.executeCommand("editor.action.showHover");
  await rec.shown("terminal-shown");
}

export async function runE2E(api: PoimenApi, planFile: string): Promise<void> {
  const plan = JSON.parse(fs.readFileSync(planFile, "utf8")) as Plan;
  const rec = new Recorder(plan);
  try {
    rec.write("activated", { version: vscode.version });
    await api.ready();
    rec.write("ready", { server: api.server() });
    const uri = vscode.Uri.file(plan.document);
    const editor = await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
    const range = toRange(plan.diagnostic.range);
    const other = vscode.languages.createDiagnosticCollection("e2e-linter");
    const diagnostic = new vscode.Diagnostic(range, plan.diagnostic.message, vscode.DiagnosticSeverity.Error);
    diagnostic.source = plan.diagnostic.source;
    if (plan.diagnostic.code) diagnostic.code = plan.diagnostic.code;
    other.set(uri, [diagnostic]);
    rec.write("diagnostic-set", { source: diagnostic.source });
    const card = await hoverCard(uri, range.start, plan.timeoutMs);
    rec.write("hover", { markdown: card });
    editor.selection = new vscode.Selection(range.start, range.start);
    editor.revealRange(range);
    await vscode.commands.executeCommand("editor.action.showHover");
    await rec.shown("hover-shown");
    await whatDoWeKnow(uri, range, rec, plan);
    await vscode.window.showTextDocument(editor.document, { preview: false });
    await remember(uri, range, rec);
    if (plan.terminal) await terminalFailure(plan, rec);
    rec.write("done");
  } catch (err) {
    rec.write("error", { message: err instanceof Error ? err.stack ?? err.message : String(err) });
  }
}
