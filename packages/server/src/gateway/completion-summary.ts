/** What a chat completion answered, gathered from a JSON body or from SSE chunks: what a trace keeps of it. */
export interface CompletionSummary {
  content: string | null;
  toolCalls: { id?: string; type: string; function: { name: string; arguments: string } }[];
  finishReason?: string;
  usage?: { promptTokens?: number; completionTokens?: number; totalTokens?: number };
  /** The model the server says answered. */
  model?: string;
  /** The OpenAI error body, when the server answered one (inside a stream or as a non-2xx). */
  error?: { message: string; type?: string; code?: string | number };
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Text as PostgreSQL stores it: NUL and lone surrogates, which a model's output may hold, become U+FFFD. */
function storable(text: string): string {
  const wellFormed = text.isWellFormed() ? text : text.toWellFormed();
  return wellFormed.includes("\0") ? wellFormed.replaceAll("\0", "\uFFFD") : wellFormed;
}

/** A string field of the answer, storable; anything but a string: undefined. */
const text = (value: unknown): string | undefined =>
  typeof value === "string" ? storable(value) : undefined;

/** A token count that fits the store's integer columns; anything else: undefined. */
function count(value: unknown): number | undefined {
  return Number.isInteger(value) && (value as number) >= 0 && (value as number) < 2 ** 31
    ? (value as number)
    : undefined;
}

function usageOf(u: unknown): CompletionSummary["usage"] {
  if (!isObject(u)) return undefined;
  return {
    promptTokens: count(u.prompt_tokens),
    completionTokens: count(u.completion_tokens),
    totalTokens: count(u.total_tokens),
  };
}

function errorOf(e: unknown): CompletionSummary["error"] {
  if (typeof e === "string") return { message: storable(e) };
  if (!isObject(e)) return undefined;
  return {
    message: text(e.message) ?? "the server's error has no message",
    type: text(e.type),
    code: typeof e.code === "number" ? e.code : text(e.code),
  };
}

/**
 * The summary of a non-streamed `chat.completion` body (first choice). Whatever the server sent, the summary has the
 * declared types and only storable text, so its trace can be stored.
 */
export function summarizeCompletion(body: unknown): CompletionSummary {
  const b = isObject(body) ? body : {};
  const choice = Array.isArray(b.choices) && isObject(b.choices[0]) ? b.choices[0] : {};
  const message = isObject(choice.message) ? choice.message : {};
  return {
    content: text(message.content) ?? null,
    toolCalls: Array.isArray(message.tool_calls)
      ? message.tool_calls.filter(isObject).map((c) => {
          const fn = isObject(c.function) ? c.function : {};
          const id = text(c.id);
          return {
            ...(id === undefined ? {} : { id }),
            type: text(c.type) ?? "function",
            function: { name: text(fn.name) ?? "", arguments: text(fn.arguments) ?? "" },
          };
        })
      : [],
    finishReason: text(choice.finish_reason),
    usage: usageOf(b.usage),
    model: text(b.model),
    error: errorOf(b.error),
  };
}

/**
 * Accumulates a streamed completion from its SSE bytes as they pass (first choice): content deltas, tool-call
 * fragments by index, the finish reason, usage, or an error event. Feed it chunks with `push`, read `summary()`.
 */
export class SseAccumulator {
  private readonly decoder = new TextDecoder();
  private buffer = "";
  private content = "";
  private sawContent = false;
  private readonly calls = new Map<
    number,
    { id?: string; type: string; function: { name: string; arguments: string } }
  >();
  private finishReason?: string;
  private usage?: CompletionSummary["usage"];
  private model?: string;
  private error?: CompletionSummary["error"];

  push(chunk: Uint8Array): void {
    this.buffer += this.decoder.decode(chunk, { stream: true });
    let end = this.buffer.indexOf("\n");
    while (end >= 0) {
      const line = this.buffer.slice(0, end).trim();
      this.buffer = this.buffer.slice(end + 1);
      if (line.startsWith("data:")) this.event(line.slice(5).trim());
      end = this.buffer.indexOf("\n");
    }
  }

  summary(): CompletionSummary {
    return {
      content: this.sawContent ? storable(this.content) : null,
      toolCalls: [...this.calls.entries()]
        .sort(([a], [b]) => a - b)
        .map(([, c]) => ({
          ...c,
          function: {
            name: storable(c.function.name),
            arguments: storable(c.function.arguments),
          },
        })),
      finishReason: this.finishReason,
      usage: this.usage,
      model: this.model,
      error: this.error,
    };
  }

  private event(data: string): void {
    if (data === "[DONE]" || data === "") return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      return;
    }
    if (!isObject(parsed)) return;
    if (parsed.error !== undefined && parsed.error !== null) this.error = errorOf(parsed.error);
    this.model = text(parsed.model) ?? this.model;
    if (isObject(parsed.usage)) this.usage = usageOf(parsed.usage);
    for (const choice of Array.isArray(parsed.choices) ? parsed.choices : []) {
      if (!isObject(choice) || (choice.index ?? 0) !== 0) continue;
      const delta = isObject(choice.delta) ? choice.delta : {};
      if (typeof delta.content === "string") {
        this.content += delta.content;
        this.sawContent = true;
      }
      for (const d of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
        if (!isObject(d)) continue;
        const i = Number.isInteger(d.index) ? (d.index as number) : 0;
        const fn = isObject(d.function) ? d.function : {};
        const call = this.calls.get(i) ?? {
          type: text(d.type) ?? "function",
          function: { name: "", arguments: "" },
        };
        const id = text(d.id);
        if (id) call.id = id;
        if (typeof fn.name === "string") call.function.name += fn.name;
        if (typeof fn.arguments === "string") call.function.arguments += fn.arguments;
        this.calls.set(i, call);
      }
      const finish = text(choice.finish_reason);
      if (finish) this.finishReason = finish;
    }
  }
}
