/** Mirror of the server's settings (server/poimen/lsp/settings.py): what the extension
 * sends as initializationOptions. Names are the server's camelCase option names. */

export const SERVER_KEYS = [
  "vault",
  "project",
  "generator",
  "generatorUrl",
  "generatorModel",
  "budget",
  "scope",
  "minSeverity",
  "legTimeoutS",
  "debounceMs",
  "queueLimit",
  "cacheSize",
  "answersDir",
] as const;

export type ServerSettings = Partial<Record<(typeof SERVER_KEYS)[number], string | number>>;

export type Lookup = (key: string) => unknown;

/** The server's options from a `poimen.*` lookup, leaving out unset and empty values
 * (the server then applies its defaults). `project` defaults to the workspace name. */
export function serverSettings(get: Lookup, defaultProject?: string): ServerSettings {
  const out: ServerSettings = {};
  for (const key of SERVER_KEYS) {
    let value = get(key);
    if (typeof value === "string") value = value.trim();
    if (value === "" || value === undefined || value === null) continue;
    if (typeof value === "string" || typeof value === "number") out[key] = value;
  }
  if (out.project === undefined && defaultProject) out.project = defaultProject;
  return out;
}

/** Arguments for `mem`: the vault (a global option), `lsp`, then the user's extra
 * arguments for `mem lsp` (such as `--log-file`). */
export function serverArgs(extra: readonly string[], settings: ServerSettings): string[] {
  const args: string[] = [];
  if (typeof settings.vault === "string") args.push("--vault", settings.vault);
  return [...args, "lsp", ...extra];
}
