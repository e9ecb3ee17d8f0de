/** Finding the `mem` executable: setting, then the workspace's .venv, then PATH. */
import * as fs from "node:fs";
import * as path from "node:path";

export type ServerOrigin = "setting" | "workspace" | "path";

export interface ServerCommand {
  command: string;
  origin: ServerOrigin;
}

export interface DiscoveryInput {
  setting: string;
  workspaceFolders: readonly string[];
  pathEnv: string;
  platform?: NodeJS.Platform;
  isExecutable?: (file: string) => boolean;
}

export class ServerNotFound extends Error {}

export function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function venvCandidates(folder: string, platform: NodeJS.Platform): string[] {
  return platform === "win32"
    ? [path.join(folder, ".venv", "Scripts", "mem.exe")]
    : [path.join(folder, ".venv", "bin", "mem")];
}

function pathCandidates(pathEnv: string, platform: NodeJS.Platform): string[] {
  const sep = platform === "win32" ? ";" : ":";
  const name = platform === "win32" ? "mem.exe" : "mem";
  return pathEnv.split(sep).filter(Boolean).map((dir) => path.join(dir, name));
}

/** Resolve the server executable or throw ServerNotFound with a message a user can act on. */
export function discoverServer(input: DiscoveryInput): ServerCommand {
  const platform = input.platform ?? process.platform;
  const executable = input.isExecutable ?? isExecutable;
  const setting = input.setting.trim();
  if (setting) {
    if (executable(setting)) return { command: setting, origin: "setting" };
    throw new ServerNotFound(
      `poimen.server.path is set to "${setting}", which is not an executable file.`
    );
  }
  for (const folder of input.workspaceFolders) {
    for (const candidate of venvCandidates(folder, platform)) {
      if (executable(candidate)) return { command: candidate, origin: "workspace" };
    }
  }
  for (const candidate of pathCandidates(input.pathEnv, platform)) {
    if (executable(candidate)) return { command: candidate, origin: "path" };
  }
  throw new ServerNotFound(
    "poimen: could not find the `mem` language server. Install poimen (`pip install poimen`) " +
      "into the workspace's .venv or onto PATH, or set `poimen.server.path`."
  );
}
