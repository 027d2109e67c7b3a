import { spawnSync } from "node:child_process";
import { torchPython } from "../torch-worker.ts";

/**
 * Why the torch engine's tests cannot run here (no Python with torch, transformers and peft), or undefined when
 * they can. `npm test` makes the project's venv first (scripts/python-env.mjs), so in CI this is undefined.
 */
export function torchUnavailable(): string | undefined {
  const python = torchPython();
  const probe = spawnSync(python, ["-c", "import torch, transformers, peft, safetensors"], {
    encoding: "utf8",
  });
  if (probe.error) return `no ${python} (run node scripts/python-env.mjs, or set ARC_PYTHON)`;
  if (probe.status !== 0)
    return `${python} lacks torch, transformers, peft or safetensors: ${probe.stderr.trim().split("\n").pop()}`;
  return undefined;
}
