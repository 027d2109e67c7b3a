import { spawn } from "node:child_process";
import { resolve } from "node:path";
import type { GenMessage } from "@arc/core";
import { TORCH_WORKER_DIR, torchPython } from "./torch-worker.ts";

/** What to ask plain transformers about a checkpoint (see `python -m arc_tools.hf_reference`). */
export interface HfReferenceRequest {
  modelDir: string;
  /** LoRA adapter folders in PEFT's layout, each put on the model by PEFT in turn for the greedy prompts. */
  adapters?: string[];
  /** CPU threads of torch (default 1). */
  threads?: number;
  /** Conversations to render with `apply_chat_template(..., tools, add_generation_prompt=True)`. */
  conversations?: { messages: GenMessage[]; tools?: object[] }[];
  /** Token sequences whose every token after the first gets its log-prob. */
  sequences?: number[][];
  /** Prompts to decode greedily with `generate`. */
  greedy?: { promptTokens: number[]; maxTokens: number }[];
}

/** transformers' answers, each list in the request's order, and the seconds each part took. */
export interface HfReferenceAnswer {
  templates: number[][];
  logprobs: number[][];
  greedy: number[][];
  /** Per adapter of the request, the greedy tokens of every greedy prompt with it. */
  adapterGreedy: number[][][];
  seconds: Record<string, number>;
}

/** Runs transformers (float32, CPU) in the project's Python on the request: the reference Arc's engines meet. */
export function hfReference(request: HfReferenceRequest, python = torchPython()): Promise<HfReferenceAnswer> {
  const child = spawn(python, ["-m", "arc_tools.hf_reference"], {
    env: { ...process.env, PYTHONPATH: TORCH_WORKER_DIR, OMP_NUM_THREADS: String(request.threads ?? 1) },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  const adapters = request.adapters?.map((a) => resolve(a));
  child.stdin.end(JSON.stringify({ ...request, modelDir: resolve(request.modelDir), adapters }));
  return new Promise((done, fail) => {
    child.on("error", fail);
    child.on("close", (code) => {
      if (code !== 0)
        return fail(
          new Error(
            `arc_tools.hf_reference exited ${code}:\n${stderr.trim().split("\n").slice(-10).join("\n")}`,
          ),
        );
      done(JSON.parse(stdout) as HfReferenceAnswer);
    });
  });
}
