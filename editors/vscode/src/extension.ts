/** VS Code glue: start `mem lsp`, forward what the editor sees, give the commands a home. */
import * as path from "node:path";
import * as vscode from "vscode";
import {
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  TransportKind,
} from "vscode-languageclient/node";
import { discoverServer, ServerCommand, ServerNotFound } from "./discovery";
import { DiagnosticForwarder, terminalPayload } from "./payloads";
import { serverArgs, serverSettings } from "./settings";
import { OutputTail, stripAnsi } from "./text";
import { askLesson, runCommand } from "./commands";
import { runE2E } from "./e2e";

const TERMINAL_TAIL = 256 * 1024;
const READ_GRACE_MS = 2000;

interface RememberFix {
  failure: string;
  title?: string;
  parents?: string[];
}

export interface PoimenApi {
  /** Resolves when the server has started (or rejects with why it could not). */
  ready(): Promise<void>;
  client(): LanguageClient | undefined;
  server(): ServerCommand | undefined;
  output: vscode.OutputChannel;
}

let client: LanguageClient | undefined;
let server: ServerCommand | undefined;
let starting: Promise<void> = Promise.resolve();

function config(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration("poimen");
}

/** The server's options from the `poimen.*` settings; project defaults to the folder name. */
function currentSettings() {
  const folders = workspacePaths();
  const cfg = config();
  return serverSettings((key) => cfg.get(key), folders[0] ? path.basename(folders[0]) : undefined);
}

function workspacePaths(): string[] {
  return (vscode.workspace.workspaceFolders ?? [])
    .filter((f) => f.uri.scheme === "file")
    .map((f) => f.uri.fsPath);
}

async function startClient(output: vscode.OutputChannel): Promise<void> {
  const cfg = config();
  const folders = workspacePaths();
  try {
    server = discoverServer({
      setting: cfg.get<string>("server.path", ""),
      workspaceFolders: folders,
      pathEnv: process.env.PATH ?? "",
    });
  } catch (err) {
    if (!(err instanceof ServerNotFound)) throw err;
    output.appendLine(err.message);
    void vscode.window.showErrorMessage(err.message, "Open Settings").then((pick) => {
      if (pick) void vscode.commands.executeCommand("workbench.action.openSettings", "poimen.server");
    });
    throw err;
  }
  const settings = currentSettings();
  const args = serverArgs(cfg.get<string[]>("server.args", []), settings);
  output.appendLine(`starting ${server.command} ${args.join(" ")} (found via ${server.origin})`);
  const serverOptions: ServerOptions = {
    command: server.command,
    args,
    transport: TransportKind.stdio,
    options: folders[0] ? { cwd: folders[0] } : undefined,
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: "file" }, { scheme: "untitled" }],
    initializationOptions: settings,
    outputChannel: output,
    middleware: {
      workspace: {
        // Answer `workspace/configuration` with the server's own option names only.
        configuration: async (params, token, next) => {
          const answered = await next(params, token);
          if (!Array.isArray(answered)) return answered;
          return params.items.map((item, i) =>
            !item.section || item.section === "poimen" ? currentSettings() : answered[i]
          );
        },
      },
      executeCommand: (command, args, next) =>
        runCommand(command, args, async (filled) => next(command, filled)),
    },
  };
  client = new LanguageClient("poimen", "poimen", serverOptions, clientOptions);
  await client.start();
  // The server saw a failing command pass and the user agreed to record what fixed it.
  client.onNotification("poimen/rememberFix", async (params: RememberFix) => {
    const text = await askLesson(params.title);
    if (text) {
      await vscode.commands.executeCommand("poimen.remember", {
        text, failure: params.failure, parents: params.parents,
      });
    }
  });
  // what other sources reported before this server started
  forwarder = new DiagnosticForwarder();
  forward(vscode.languages.getDiagnostics().map(([uri]) => uri));
}

let forwarder = new DiagnosticForwarder();

function forward(uris: readonly vscode.Uri[]): void {
  if (!client?.isRunning() || !config().get<boolean>("forward.diagnostics", true)) return;
  for (const uri of uris) {
    const params = forwarder.payload(uri.toString(), vscode.languages.getDiagnostics(uri));
    if (params) void client.sendNotification("poimen/diagnostics", params);
  }
}

function forwardDiagnostics(context: vscode.ExtensionContext): void {
  context.subscriptions.push(vscode.languages.onDidChangeDiagnostics((event) => forward(event.uris)));
}

/** Settings changes: the server's options are pushed; a new executable needs a restart. */
function watchSettings(context: vscode.ExtensionContext): void {
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (!event.affectsConfiguration("poimen") || !client?.isRunning()) return;
      if (event.affectsConfiguration("poimen.server")) {
        const pick = await vscode.window.showInformationMessage(
          "poimen: restart the server to use the new settings?", "Restart"
        );
        if (pick) await vscode.commands.executeCommand("poimen.restartServer");
        return;
      }
      void client.sendNotification("workspace/didChangeConfiguration", {
        settings: { poimen: currentSettings() },
      });
    })
  );
}

function forwardTerminal(context: vscode.ExtensionContext): void {
  const reads = new Map<vscode.TerminalShellExecution, { tail: OutputTail; done: Promise<void> }>();
  context.subscriptions.push(
    vscode.window.onDidStartTerminalShellExecution((event) => {
      const tail = new OutputTail(TERMINAL_TAIL);
      // read() only yields what is written after the first call: start reading now.
      const stream = event.execution.read();
      const done = (async () => {
        for await (const chunk of stream) tail.push(chunk);
      })().catch(() => undefined);
      reads.set(event.execution, { tail, done });
    }),
    vscode.window.onDidEndTerminalShellExecution(async (event) => {
      const read = reads.get(event.execution);
      reads.delete(event.execution);
      if (!read || !client?.isRunning() || !config().get<boolean>("forward.terminal", true)) return;
      await Promise.race([read.done, new Promise((r) => setTimeout(r, READ_GRACE_MS))]);
      const params = terminalPayload(
        event.execution.commandLine.value,
        event.exitCode,
        stripAnsi(read.tail.text()),
        event.execution.cwd?.fsPath
      );
      void client.sendNotification("poimen/terminalOutput", params);
    })
  );
}

export async function activate(context: vscode.ExtensionContext): Promise<PoimenApi> {
  const output = vscode.window.createOutputChannel("poimen");
  context.subscriptions.push(output);
  starting = startClient(output);
  starting.catch((err) => output.appendLine(`server did not start: ${err?.message ?? err}`));
  forwardDiagnostics(context);
  forwardTerminal(context);
  watchSettings(context);
  context.subscriptions.push(
    vscode.commands.registerCommand("poimen.restartServer", async () => {
      await client?.stop().catch(() => undefined);
      client = undefined;
      starting = startClient(output);
      await starting;
    })
  );
  const api: PoimenApi = { ready: () => starting, client: () => client, server: () => server, output };
  if (process.env.POIMEN_E2E_PLAN) {
    void runE2E(api, process.env.POIMEN_E2E_PLAN);
  }
  return api;
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
