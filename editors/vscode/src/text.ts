/** Text helpers for forwarded terminal output. */

// CSI, OSC (terminated by BEL or ST), other ESC sequences, and stray C0 controls but \t \n.
const ANSI =
  /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[PX^_][^\u001b]*\u001b\\|\u001b[@-Z\\-_]|[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;

/** Remove ANSI escape sequences and turn CRLF / lone CR line rewrites into plain lines. */
export function stripAnsi(raw: string): string {
  const text = raw.replace(/\r\n/g, "\n").replace(ANSI, "");
  return text
    .split("\n")
    .map((line) => {
      const cr = line.lastIndexOf("\r");
      return cr >= 0 ? line.slice(cr + 1) : line;
    })
    .join("\n");
}

/** Keeps the last `limit` characters of a stream (failures are reported at the end). */
export class OutputTail {
  private chunks: string[] = [];
  private size = 0;
  truncated = false;

  constructor(private readonly limit: number) {}

  push(chunk: string): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.chunks.length > 1 && this.size - this.chunks[0].length >= this.limit) {
      this.size -= this.chunks.shift()!.length;
      this.truncated = true;
    }
  }

  text(): string {
    const all = this.chunks.join("");
    if (all.length <= this.limit) return all;
    this.truncated = true;
    return all.slice(all.length - this.limit);
  }
}
