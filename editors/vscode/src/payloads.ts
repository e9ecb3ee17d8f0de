/** The shapes of poimen's custom notifications, built from plain editor data. */

export const OWN_SOURCE = "poimen";

export interface Position { line: number; character: number }
export interface Range { start: Position; end: Position }

export interface ForwardedDiagnostic {
  range: Range;
  message: string;
  source?: string;
  code?: string | number;
  severity: 1 | 2 | 3 | 4;
}

export interface DiagnosticsParams { uri: string; diagnostics: ForwardedDiagnostic[] }

export interface TerminalOutputParams {
  command: string;
  exitCode: number | null;
  output: string;
  cwd?: string;
}

/** What an editor diagnostic looks like before conversion (VS Code severities are 0..3). */
export interface EditorDiagnostic {
  range: Range;
  message: string;
  source?: string;
  code?: string | number | { value: string | number };
  severity: number;
}

export function toForwarded(d: EditorDiagnostic): ForwardedDiagnostic {
  const code = typeof d.code === "object" && d.code !== null ? d.code.value : d.code;
  const severity = Math.min(4, Math.max(1, d.severity + 1)) as 1 | 2 | 3 | 4;
  const out: ForwardedDiagnostic = {
    range: {
      start: { line: d.range.start.line, character: d.range.start.character },
      end: { line: d.range.end.line, character: d.range.end.character },
    },
    message: d.message,
    severity,
  };
  if (d.source) out.source = d.source;
  if (code !== undefined) out.code = code;
  return out;
}

/** Drops poimen's own diagnostics and remembers what was last sent per uri,
 * so that an unchanged set is not sent again and a cleared set is sent once. */
export class DiagnosticForwarder {
  private last = new Map<string, string>();

  constructor(private readonly maxPerUri = 200) {}

  payload(uri: string, diagnostics: readonly EditorDiagnostic[]): DiagnosticsParams | undefined {
    const forwarded = diagnostics
      .filter((d) => d.source !== OWN_SOURCE)
      .slice(0, this.maxPerUri)
      .map(toForwarded);
    const key = JSON.stringify(forwarded);
    const previous = this.last.get(uri);
    if (previous === key || (previous === undefined && forwarded.length === 0)) return undefined;
    if (forwarded.length === 0) this.last.delete(uri);
    else this.last.set(uri, key);
    return { uri, diagnostics: forwarded };
  }

  forget(uri: string): void {
    this.last.delete(uri);
  }
}

export function terminalPayload(
  command: string,
  exitCode: number | undefined,
  output: string,
  cwd?: string
): TerminalOutputParams {
  const params: TerminalOutputParams = { command, exitCode: exitCode ?? null, output };
  if (cwd) params.cwd = cwd;
  return params;
}
