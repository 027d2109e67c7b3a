import type { InferenceEngine } from "../../engine-api/index.ts";
import type { ChatCompletion, ChatModel, CompleteOptions, TeachMessage } from "./chat-model.ts";

/** Options of a ChatModel over an InferenceEngine. */
export interface EngineChatModelOptions {
  /** The name recorded on trace steps (e.g. the model version). */
  model?: string;
  /**
   * Seed of the first sampled call; each later call uses the next integer, so a run of calls is
   * reproducible while two calls never share their random stream. Greedy calls ignore it.
   */
  seed?: number;
  /** Nucleus sampling mass of every call (default 1). */
  topP?: number;
}

/**
 * The teaching protocol's ChatModel over any InferenceEngine (the embedded engine, or a remote one
 * behind the same interface). One `complete` is one single-sample `generate`; token counts are the
 * engine's own. Concurrent calls share the engine's running batch.
 */
export class EngineChatModel implements ChatModel {
  /** The name recorded on trace steps. */
  readonly model?: string;
  private nextSeed: number | undefined;

  constructor(
    private readonly engine: InferenceEngine,
    private readonly options: EngineChatModelOptions = {},
  ) {
    this.model = options.model;
    this.nextSeed = options.seed;
  }

  /** Generates one reply; rejects with the signal's reason when `signal` aborts (the engine itself only stops sampling). */
  async complete(messages: TeachMessage[], options: CompleteOptions): Promise<ChatCompletion> {
    options.signal?.throwIfAborted();
    const seed = options.temperature > 0 && this.nextSeed !== undefined ? this.nextSeed++ : undefined;
    const [result] = await this.engine.generate(
      [
        {
          messages,
          maxTokens: options.maxTokens,
          temperature: options.temperature,
          ...(this.options.topP === undefined ? {} : { topP: this.options.topP }),
          ...(seed === undefined ? {} : { seed }),
        },
      ],
      options.signal ? { signal: options.signal } : {},
    );
    options.signal?.throwIfAborted();
    return {
      text: result.text,
      promptTokens: result.promptTokens.length,
      completionTokens: result.outputTokens.length,
      finishReason: result.finishReason,
    };
  }
}
