import type { GenMessage, InferenceEngine, TokenCounter, TrainEngine, WeightSource } from "@arc/core";
import type { Recipe } from "../recipe/recipe-schema.ts";

/**
 * A recipe's engine block, the cluster the torch engine runs on, and for a rollout generator the inference server it
 * samples on: which engine, and where and how it runs.
 */
export type EngineChoice = Recipe["engine"] & { cluster?: Recipe["cluster"]; server?: Recipe["generator"] };

/** A chat message as the chat template renders it. */
export type ChatMessage = GenMessage;

/**
 * Turns chat data into training tokens with the model's chat template (the reply ends its turn); `tools` are
 * rendered where the template has a tools section.
 */
export type RenderExample = (
  messages: readonly ChatMessage[],
  reply: string,
  tools?: readonly object[],
) => { promptTokens: number[]; outputTokens: number[] };

/** Optimiser settings a recipe passes to the train engine. */
export interface TrainEngineSettings {
  learningRate: number;
  warmupSteps: number;
  /** Cosine decay steps after warm-up (0: constant learning rate). */
  decaySteps: number;
  minLearningRate: number;
  weightDecay: number;
  maxGradNorm: number;
  /** Threads that run each step's forward/backward passes (embedded: data-parallel; torch: its CPU thread pool). */
  trainThreads: number;
  /** The engine that trains (default: the embedded one, every weight trained). */
  engine?: EngineChoice;
}

/**
 * Where a run gets its engines: @arc/rl codes against the Engine API and never constructs an engine
 * itself (import direction rl → core). The embedded default lives in `worker/engine-factory.ts`;
 * a server can pass one that points at remote engines.
 */
export interface EngineFactory {
  /**
   * A trainer over a checkpoint directory (HF layout) with `settings` and a fresh optimizer; with `resume`, the
   * training state saved beside the weights (a run's own checkpoint) is restored instead.
   */
  trainEngine(
    modelDir: string,
    settings: TrainEngineSettings,
    options?: { resume?: boolean },
  ): Promise<TrainEngine>;
  /** An inference engine over a checkpoint directory, at weight version `version`, on `engine` (default embedded). */
  inferenceEngine(modelDir: string, version: number, engine?: EngineChoice): Promise<InferenceEngine>;
  /** Writes weights as an HF checkpoint directory with the architecture of `configDir`'s checkpoint. */
  saveWeights(dir: string, weights: WeightSource, configDir: string): Promise<void>;
  /** How a checkpoint's tokenizer and chat template turn chat data into training tokens. */
  renderExample(modelDir: string): Promise<RenderExample>;
  /** Counts and cuts text in a checkpoint's own tokens. */
  tokenCounter(modelDir: string): Promise<TokenCounter>;
  /** Writes freshly initialised weights of Arc's byte-level Llama of `size` to `dir` (HF layout). */
  initModel(dir: string, size: "tiny" | "small" | "base", seed: number): Promise<void>;
}
