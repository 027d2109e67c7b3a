import { pythonLacks, skipWithout } from "../../../../../scripts/required-parts.mjs";
import { torchPython } from "../torch-worker.ts";

/**
 * Why the torch engine's tests cannot run here (no Python with torch, transformers, peft and safetensors), for
 * `describe`'s `skip`, or false when they can. `npm test` makes the project's venv first (scripts/python-env.mjs);
 * where ARC_REQUIRE names python (CI), a missing one throws instead of skipping.
 */
export function torchUnavailable(): string | false {
  return skipWithout("python", pythonLacks(torchPython(), ["torch", "transformers", "peft", "safetensors"]));
}
