import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type {
  GenerateOptions,
  GenRequest,
  GenResult,
  InferenceEngine,
  ToolCallSyntax,
  WeightSource,
} from "@arc/core";
import { parseConfigJson, writeHfCheckpoint } from "../checkpoint/hf-checkpoint.ts";
import { type ChatTokenizer, loadChatTokenizer } from "../tokenizer/chat-tokenizer.ts";
import type { TorchEngineInfo, TorchEngineOptions } from "./torch-train-engine.ts";
import { TorchWorker } from "./torch-worker.ts";

/** A request as the worker takes it: token ids and sampling settings, no chat messages or signals. */
type WireRequest = Omit<GenRequest, "messages" | "tools" | "signal">;

/**
 * The PyTorch InferenceEngine: a Python worker sampling with a KV cache, per-sample seeds and per-token
 * log-probs under the raw model distribution. Prompts go in as token ids; chat messages are rendered here with the
 * checkpoint's tokenizer and chat template. New weights arrive as checkpoint directories.
 */
export class TorchInferenceEngine implements InferenceEngine {
  private version: number;
  private modelDir: string;

  private constructor(
    private readonly worker: TorchWorker,
    readonly info: TorchEngineInfo,
    modelDir: string,
    /** The checkpoint's tokenizer and chat template, which render chat messages. */
    private readonly tokenizer: ChatTokenizer,
  ) {
    this.version = info.version;
    this.modelDir = modelDir;
  }

  /** Starts a worker that samples from the checkpoint in `modelDir`, as weight version `version`. */
  static async load(
    modelDir: string,
    options: TorchEngineOptions & { version?: number } = {},
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
      });
      return new TorchInferenceEngine(worker, info, modelDir, tokenizer);
    } catch (error) {
      await worker.close();
      throw error;
    }
  }

  async generate(requests: GenRequest[], options: GenerateOptions = {}): Promise<GenResult[]> {
    if (options.onToken)
      throw new TypeError("onToken: the torch engine returns whole samples; it does not stream");
    const wire: WireRequest[] = requests.map((r, i) => {
      const { signal: _signal, messages, tools, ...rest } = r;
      const promptTokens = messages ? this.tokenizer.render(messages, { tools }) : r.promptTokens;
      if (!promptTokens) throw new TypeError(`requests[${i}]: expected promptTokens or messages`);
      return { ...rest, promptTokens, id: r.id ?? `r${i}` };
    });
    const callId = this.worker.peekNextId();
    const onAbort = requests.map((r, i) => {
      const cancel = () => this.worker.cancelRequest(callId, wire[i].id!);
      if (r.signal?.aborted) cancel();
      else r.signal?.addEventListener("abort", cancel, { once: true });
      return cancel;
    });
    try {
      const results = await this.worker.call<GenResult[]>("generate", { requests: wire }, options.signal);
      return results.map((result) => {
        const given = requests.find((_, i) => wire[i].id === result.requestId);
        return given?.id === undefined ? { ...result, requestId: undefined } : result;
      });
    } finally {
      requests.forEach((r, i) => {
        r.signal?.removeEventListener("abort", onAbort[i]);
      });
    }
  }

  get toolCallSyntax(): ToolCallSyntax | undefined {
    return this.tokenizer.toolCallSyntax;
  }

  getVersion(): number {
    return this.version;
  }

  /** Loads new weights: a checkpoint directory, or in-memory tensors written to a temporary one first. */
  async setWeights(version: number, weights: WeightSource): Promise<void> {
    if (weights.kind === "checkpoint") {
      await this.worker.call("setWeights", { version, dir: resolve(weights.dir) });
    } else {
      const dir = await mkdtemp(join(tmpdir(), "arc-torch-weights-"));
      try {
        const file = join(this.modelDir, "config.json");
        const config = parseConfigJson(JSON.parse(await readFile(file, "utf8")), file);
        await writeHfCheckpoint(dir, config, weights.tensors);
        await this.worker.call("setWeights", { version, dir });
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }
    this.version = version;
  }

  /** Stops the worker. */
  async close(): Promise<void> {
    await this.worker.close();
  }
}
