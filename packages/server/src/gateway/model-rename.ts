/** The top-level `"model": "..."` field of a chunk; quotes inside JSON strings are escaped, so content cannot match. */
const MODEL_FIELD = /"model"\s*:\s*"(?:[^"\\]|\\.)*"/;

/**
 * A completion body's JSON text with its first `model` field set to the name the client asked for (an upstream
 * answers with its own): the text is edited in place, not parsed and written again.
 */
export function renameModelInText(json: string, model: string): string {
  return json.replace(MODEL_FIELD, `"model":${JSON.stringify(model)}`);
}

/**
 * Rewrites `model` in every server-sent event of a streamed completion to the name the client asked for, as the bytes
 * pass through: whole lines are rewritten, a line cut between two reads waits for its end.
 */
export class StreamModelRename {
  private carry = "";
  private readonly decoder = new TextDecoder();
  private readonly encoder = new TextEncoder();
  private readonly field: string;

  constructor(model: string) {
    this.field = `"model":${JSON.stringify(model)}`;
  }

  /** The bytes to send on for `chunk`: every line it completes, rewritten. */
  push(chunk: Uint8Array): Uint8Array {
    const text = this.carry + this.decoder.decode(chunk, { stream: true });
    const end = text.lastIndexOf("\n") + 1;
    this.carry = text.slice(end);
    return this.encoder.encode(this.rewrite(text.slice(0, end)));
  }

  /** What is left once the stream ends. */
  end(): Uint8Array {
    const rest = this.carry + this.decoder.decode();
    this.carry = "";
    return this.encoder.encode(this.rewrite(rest));
  }

  private rewrite(lines: string): string {
    return lines
      .split("\n")
      .map((line) => (line.startsWith("data:") ? line.replace(MODEL_FIELD, this.field) : line))
      .join("\n");
  }
}
