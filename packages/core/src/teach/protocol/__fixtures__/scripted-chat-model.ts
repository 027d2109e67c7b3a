import { approximateTokenCounter } from "../../parse/index.ts";
import type { ChatCompletion, ChatModel, CompleteOptions, TeachMessage } from "../chat-model.ts";

/** Decides a scripted reply from the prompt (the last message) and the call's options. */
export type Script = (prompt: string, messages: TeachMessage[], options: CompleteOptions) => string;

/**
 * Test double of a ChatModel whose replies come from a script: the protocol's tests need a chosen reply per
 * prompt (a given diagnosis, an over-long probe, a slow call), which no real model gives on demand, and @arc/core
 * may not import the embedded engine (test/import-direction.test.ts). Token counts come from the approximate
 * counter, and maxTokens is enforced like a real backend does unless `ignoreMaxTokens` simulates one that does
 * not. Records every call it receives.
 */
export class ScriptedChatModelTestDouble implements ChatModel {
  /** Every call received, in order, for assertions on prompts and options. */
  readonly calls: { messages: TeachMessage[]; options: CompleteOptions }[] = [];
  /** The name recorded on trace steps. */
  readonly model: string;

  constructor(
    private readonly script: Script,
    private readonly settings: { model?: string; ignoreMaxTokens?: boolean; delayMs?: number } = {},
  ) {
    this.model = settings.model ?? "scripted";
  }

  async complete(messages: TeachMessage[], options: CompleteOptions): Promise<ChatCompletion> {
    this.calls.push({ messages, options });
    if (this.settings.delayMs)
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, this.settings.delayMs);
        options.signal?.addEventListener("abort", () => {
          clearTimeout(timer);
          reject(options.signal?.reason);
        });
      });
    options.signal?.throwIfAborted();
    const full = this.script(messages[messages.length - 1].content, messages, options);
    const counted = approximateTokenCounter.count(full);
    const cut = !this.settings.ignoreMaxTokens && counted > options.maxTokens;
    const text = cut ? approximateTokenCounter.truncate(full, options.maxTokens) : full;
    return {
      text,
      promptTokens: messages.reduce((n, m) => n + approximateTokenCounter.count(m.content), 0),
      completionTokens: cut ? options.maxTokens : counted,
      finishReason: cut ? "length" : "stop",
    };
  }
}
