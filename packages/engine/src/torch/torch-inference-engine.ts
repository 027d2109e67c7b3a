import { resolve } from "node:path";
import type {
  GenerateOptions,
  GenRequest,
  GenResult,
  InferenceEngine,
  ToolCallSyntax,
  WeightSource,
} from "@arc/core";
import { withWeightsDirectory } from "../checkpoint/weights-directory.ts";
import { compileGrammar } from "../grammar/grammar-program.ts";
import { LogitAdjustment } from "../inference/logit-adjustment.ts";
import { type ChatTokenizer, loadChatTokenizer } from "../tokenizer/chat-tokenizer.ts";
import { GenerationQueue, type WireRequest } from "./generation-queue.ts";
import type { TorchEngineInfo, TorchEngineOptions } from "./torch-train-engine.ts";
import { TorchWorker } from "./torch-worker.ts";

/**
 * The PyTorch InferenceEngine: a Python worker sampling with a KV cache, per-sample seeds and per-token
 * log-probs under the raw model distribution. Prompts go in as token ids; chat messages are rendered here with the
 * checkpoint's tokenizer and chat template. Calls made while the worker is busy are batched together, and tokens
 * stream to `onToken` after each decoding step (an engine on a Ray actor hands each sample over whole, at its end).
 * New weights arrive as checkpoint directories.
 */
export class TorchInferenceEngine implements InferenceEngine {
  private version: number;
  private modelDir: string;
  private readonly queue: GenerationQueue;

  private constructor(
    private readonly worker: TorchWorker,
    readonly info: TorchEngineInfo,
    modelDir: string,
    /** The checkpoint's tokenizer and chat template, which render chat messages. */
    private readonly tokenizer: ChatTokenizer,
  ) {
    this.version = info.version;
    this.modelDir = modelDir;
    this.queue = new GenerationQueue(worker, tokenizer);
  }

  /**
   * Starts a worker that samples from the checkpoint in `modelDir`, as weight version `version`, keeping up to
   * `prefixCacheBytes` of earlier prompts' prefixes' keys and values (default 128 MiB; 0 turns the cache off).
   */
  static async load(
    modelDir: string,
    options: TorchEngineOptions & { version?: number; prefixCacheBytes?: number } = {},
  ): Promise<TorchInferenceEngine> {
    const tokenizer = await loadChatTokenizer(modelDir);
    const worker = TorchWorker.start({ ...options, processes: 1 });
    try {
      const info = await worker.call<TorchEngineInfo>("init", {
        role: "inference",
        modelDir: resolve(modelDir),
        device: options.device ?? "auto",
        dtype: options.dtype ?? "float32",
        threads: options.threads,
        version: options.version ?? 0,
        ...(options.prefixCacheBytes !== undefined && { prefixCacheBytes: options.prefixCacheBytes }),
      });
      return new TorchInferenceEngine(worker, info, modelDir, tokenizer);
    } catch (error) {
      await worker.close();
      throw error;
    }
  }

  async generate(requests: GenRequest[], options: GenerateOptions = {}): Promise<GenResult[]> {
    const wire: WireRequest[] = requests.map((r, i) => {
      const { signal: _signal, messages, tools, grammar: _grammar, ...rest } = r;
      const promptTokens = messages ? this.tokenizer.render(messages, { tools }) : r.promptTokens;
      if (!promptTokens) throw new TypeError(`requests[${i}]: expected promptTokens or messages`);
      // a bias or penalty out of range is the caller's error here, as on the embedded engine (the worker checks too)
      LogitAdjustment.of(r, this.info.vocabSize, `requests[${i}]`);
      const grammar = r.grammar && compileGrammar(r.grammar);
      return { ...rest, promptTokens, id: r.id ?? `r${i}`, ...(grammar && { grammar }) };
    });
    return this.queue.submit(requests, wire, options);
  }

  get toolCallSyntax(): ToolCallSyntax | undefined {
    return this.tokenizer.toolCallSyntax;
  }

  /** What the worker's prefix cache holds and has saved; null when it is off. */
  async prefixCacheStats(): Promise<TorchEngineInfo["prefixCache"]> {
    return (await this.worker.call<TorchEngineInfo>("info", {})).prefixCache;
  }

  getVersion(): number {
    return this.version;
  }

  /** Loads new weights: a checkpoint directory, or in-memory tensors written to a temporary one first. */
  async setWeights(version: number, weights: WeightSource): Promise<void> {
    await withWeightsDirectory(weights, this.modelDir, (dir) =>
      this.worker.call("setWeights", { version, dir }),
    );
    this.version = version;
  }

  /** Stops the worker. */
  async close(): Promise<void> {
    await this.worker.close();
  }
}
