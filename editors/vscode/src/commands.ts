/** Client side of the server's commands: fill in what a palette invocation lacks
 * (the cursor's document and position, the lesson text) and show what comes back. */
import * as vscode from "vscode";

const AT_CURSOR = new Set(["poimen.whatDoWeKnow", "poimen.remember"]);

function cursorArgument(): Record<string, unknown> | undefined {
  const editor = vscode.window.activeTextEditor;
  if (!editor) return undefined;
  const { line, character } = editor.selection.active;
  return { uri: editor.document.uri.toString(), position: { line, character } };
}

/** Arguments to send, or undefined when the user cancelled or there is nothing to act on. */
export async function fillCommandArgs(command: string, args: unknown[]): Promise<unknown[] | undefined> {
  let filled = [...args];
  if (AT_CURSOR.has(command) && filled.length === 0) {
    const here = cursorArgument();
    if (!here) {
      void vscode.window.showWarningMessage("poimen: put the cursor on an error first.");
      return undefined;
    }
    filled = [here];
  }
  if (command === "poimen.remember") {
    const first = (filled[0] ?? {}) as Record<string, unknown>;
    if (typeof first.text !== "string" || !first.text.trim()) {
      const text = await vscode.window.showInputBox({
        title: "poimen: Remember how this was fixed",
        prompt: "The lesson: what caused this failure and what fixed it",
        ignoreFocusOut: true,
        validateInput: (value) => (value.trim() ? undefined : "Write what fixed it"),
      });
      if (!text) return undefined;
      filled = [{ ...first, text }, ...filled.slice(1)];
    }
  }
  return filled;
}

/** Show a command's result when the server returned text rather than a document. */
export async function answerCommand(command: string, result: unknown): Promise<unknown> {
  if (typeof result === "string" && result.trim()) {
    const doc = await vscode.workspace.openTextDocument({ language: "markdown", content: result });
    await vscode.window.showTextDocument(doc, { preview: true, viewColumn: vscode.ViewColumn.Beside });
  } else if (command === "poimen.remember" && result && typeof result === "object") {
    const verdict = (result as Record<string, unknown>).verdict;
    if (typeof verdict === "string") void vscode.window.showInformationMessage(`poimen: memory ${verdict}`);
  }
  return result;
}
