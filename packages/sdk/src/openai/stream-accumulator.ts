import type { ChatCompletionChunkLike, ChatCompletionLike, ToolCallLike } from "./openai-shapes.ts";

interface ChoiceSoFar {
  index: number;
  content: string[];
  refusal: string[];
  toolCalls: ToolCallLike[];
  finishReason: string | null;
}

/**
 * Assembles the chunks of a streamed chat completion into the completion they add up to: content and refusal
 * concatenated, tool calls merged by their `index` (id, type and name set when they arrive, arguments
 * concatenated), the finish reason per choice, and usage from the final chunk when
 * `stream_options.include_usage` asked for it. Reads the chunks; never changes them.
 */
export class StreamAccumulator {
  private readonly choices = new Map<number, ChoiceSoFar>();
  private readonly completion: ChatCompletionLike = {};
  /** How many chunks arrived. */
  chunks = 0;

  /** Folds one chunk in. */
  add(chunk: ChatCompletionChunkLike): void {
    this.chunks++;
    if (typeof chunk.id === "string") this.completion.id = chunk.id;
    if (typeof chunk.model === "string") this.completion.model = chunk.model;
    if (typeof chunk.system_fingerprint === "string")
      this.completion.system_fingerprint = chunk.system_fingerprint;
    if (chunk.usage) this.completion.usage = chunk.usage;
    for (const delta of chunk.choices ?? []) {
      const index = delta.index ?? 0;
      let choice = this.choices.get(index);
      if (!choice) {
        choice = { index, content: [], refusal: [], toolCalls: [], finishReason: null };
        this.choices.set(index, choice);
      }
      if (delta.finish_reason) choice.finishReason = delta.finish_reason;
      const d = delta.delta;
      if (!d) continue;
      if (typeof d.content === "string") choice.content.push(d.content);
      if (typeof d.refusal === "string") choice.refusal.push(d.refusal);
      for (const part of d.tool_calls ?? []) {
        const slot = part.index ?? 0;
        let call = choice.toolCalls[slot];
        if (!call) {
          call = { function: { name: "", arguments: "" } };
          choice.toolCalls[slot] = call;
        }
        const fn = call.function!;
        if (part.id) call.id = part.id;
        if (part.type) call.type = part.type;
        if (part.function?.name) fn.name = part.function.name;
        if (part.function?.arguments) fn.arguments += part.function.arguments;
      }
    }
  }

  /** The completion the chunks so far add up to. */
  result(): ChatCompletionLike {
    const choices = [...this.choices.values()]
      .sort((a, b) => a.index - b.index)
      .map((c) => ({
        index: c.index,
        finish_reason: c.finishReason,
        message: {
          content: c.content.length > 0 ? c.content.join("") : null,
          refusal: c.refusal.length > 0 ? c.refusal.join("") : null,
          tool_calls: c.toolCalls.filter(Boolean),
        },
      }));
    return { ...this.completion, choices };
  }
}
