/** Client side of the server's commands (server/poimen/lsp/commands.py): each takes one
 * object argument. A palette invocation has none, so the extension fills in the cursor's
 * failure, asks for the lesson text, or offers a pick of memories. */
import * as vscode from "vscode";

type Send = (args: unknown[]) => Promise<unknown>;
type Argument = Record<string, unknown>;

/** The failure under the cursor: the first diagnostic on its line (any source) as
 * `{uri, position, message}`; `{}` (the latest failure the server saw) when there is none. */
export function cursorTarget(): Argument {
  const editor = vscode.window.activeTextEditor;
  if (!editor) return {};
  const line = editor.selection.active.line;
  const here = vscode.languages
    .getDiagnostics(editor.document.uri)
    .find((d) => d.range.start.line <= line && line <= d.range.end.line);
  if (!here) return {};
  const { line: l, character } = here.range.start;
  return { uri: editor.document.uri.toString(), position: { line: l, character }, message: here.message };
}

export async function askLesson(title?: string): Promise<string | undefined> {
  const text = await vscode.window.showInputBox({
    title: "poimen: Remember how this was fixed",
    prompt: title ? `What caused ${title}, and what fixed it?` : "What caused this failure, and what fixed it?",
    ignoreFocusOut: true,
    validateInput: (value) => (value.trim() ? undefined : "Write what fixed it"),
  });
  return text?.trim() || undefined;
}

async function showMarkdown(content: string): Promise<void> {
  const doc = await vscode.workspace.openTextDocument({ language: "markdown", content });
  await vscode.window.showTextDocument(doc, { preview: true, viewColumn: vscode.ViewColumn.Beside });
}

export function projectionMarkdown(sha: string, projection: Argument): string {
  const lines = Array.isArray(projection.lines) ? (projection.lines as Argument[]) : [];
  const out = [`# Symptom projection of ${sha}`, ""];
  out.push(...lines.map((l) => `- ${String(l.text ?? l)}  _(${String(l.origin ?? "?")})_`));
  if (!lines.length) out.push("_(empty: this memory explains no failure)_");
  out.push("");
  for (const [key, value] of Object.entries(projection)) {
    if (key !== "lines" && (typeof value !== "object" || value === null)) out.push(`${key}: ${String(value)}`);
  }
  return out.join("\n") + "\n";
}

async function showSymptoms(args: unknown[], send: Send): Promise<unknown> {
  let sha = (args[0] as Argument | undefined)?.sha;
  if (typeof sha !== "string") {
    const listed = (await send([{}])) as { memories?: Argument[] } | undefined;
    const memories = listed?.memories ?? [];
    if (!memories.length) {
      void vscode.window.showInformationMessage("poimen: no memories in the answers shown so far.");
      return listed;
    }
    const pick = await vscode.window.showQuickPick(
      memories.map((m) => ({
        label: String(m.label ?? m.sha),
        description: `${String(m.level ?? "?")} · ${String(m.sha).slice(0, 10)}`,
        sha: String(m.sha),
      })),
      { title: "poimen: Show symptom projection", placeHolder: "Which memory?" }
    );
    if (!pick) return undefined;
    sha = pick.sha;
  }
  const projection = (await send([{ sha }])) as Argument;
  await showMarkdown(projectionMarkdown(sha as string, projection ?? {}));
  return projection;
}

/** Run `command` through `send` (the language client), completing its argument first. */
export async function runCommand(command: string, args: unknown[], send: Send): Promise<unknown> {
  switch (command) {
    case "poimen.whatDoWeKnow":
      return send(args.length ? args : [cursorTarget()]);
    case "poimen.remember": {
      const target = (args[0] as Argument | undefined) ?? cursorTarget();
      if (typeof target.text === "string" && target.text.trim()) return send([target]);
      const text = await askLesson();
      return text ? send([{ ...target, text }]) : undefined;
    }
    case "poimen.showSymptoms":
      return showSymptoms(args, send);
    default:
      return send(args.length ? args : [{}]);
  }
}
