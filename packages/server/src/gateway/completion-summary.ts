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

type Usage = { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number };
type ToolCallDelta = {
  index?: number;
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
};

function usageOf(u: Usage | undefined): CompletionSummary["usage"] {
  if (!u) return undefined;
  return {
    promptTokens: u.prompt_tokens,
    completionTokens: u.completion_tokens,
    totalTokens: u.total_tokens,
  };
}

/** The summary of a non-streamed `chat.completion` body (first choice). */
export function summarizeCompletion(body: unknown): CompletionSummary {
  const b = (body ?? {}) as {
    model?: string;
    usage?: Usage;
    error?: CompletionSummary["error"];
    choices?: {
      message?: { content?: string | null; tool_calls?: CompletionSummary["toolCalls"] };
      finish_reason?: string;
    }[];
  };
  const choice = b.choices?.[0];
  return {
    content: choice?.message?.content ?? null,
    toolCalls: choice?.message?.tool_calls ?? [],
    finishReason: choice?.finish_reason ?? undefined,
    usage: usageOf(b.usage),
    model: b.model,
    error: b.error,
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
      content: this.sawContent ? this.content : null,
      toolCalls: [...this.calls.entries()].sort(([a], [b]) => a - b).map(([, c]) => c),
      finishReason: this.finishReason,
      usage: this.usage,
      model: this.model,
      error: this.error,
    };
  }

  private event(data: string): void {
    if (data === "[DONE]" || data === "") return;
    let parsed: {
      model?: string;
      usage?: Usage | null;
      error?: CompletionSummary["error"];
      choices?: {
        index?: number;
        delta?: { content?: string | null; tool_calls?: ToolCallDelta[] };
        finish_reason?: string | null;
      }[];
    };
    try {
      parsed = JSON.parse(data);
    } catch {
      return;
    }
    if (parsed.error) this.error = parsed.error;
    if (parsed.model) this.model = parsed.model;
    if (parsed.usage) this.usage = usageOf(parsed.usage);
    for (const choice of parsed.choices ?? []) {
      if ((choice.index ?? 0) !== 0) continue;
      if (typeof choice.delta?.content === "string") {
        this.content += choice.delta.content;
        this.sawContent = true;
      }
      for (const d of choice.delta?.tool_calls ?? []) {
        const i = d.index ?? 0;
        const call = this.calls.get(i) ?? {
          type: d.type ?? "function",
          function: { name: "", arguments: "" },
        };
        if (d.id) call.id = d.id;
        if (d.function?.name) call.function.name += d.function.name;
        if (d.function?.arguments) call.function.arguments += d.function.arguments;
        this.calls.set(i, call);
      }
      if (choice.finish_reason) this.finishReason = choice.finish_reason;
    }
  }
}
