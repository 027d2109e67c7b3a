import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { tf } from "../backend/tf-backend.ts";
import { type NamedTensor, writeSafetensors } from "../checkpoint/safetensors.ts";
import type { LoraOptions } from "./lora.ts";

/**
 * Writes LoRA adapters in PEFT's layout, which PEFT (`PeftModel.from_pretrained`) and vLLM (`--lora-modules`,
 * `/v1/load_lora_adapter`) load onto the base model the run started from: `adapter_config.json` and
 * `adapter_model.safetensors` with `base_model.model.<weight>.lora_A.weight` [r, in] and `.lora_B.weight` [out, r].
 * `adapters` holds them in the engine's layout by `<weight name>.lora_A` ([in, r]) and `.lora_B` ([r, out]).
 */
export async function writePeftAdapter(
  dir: string,
  adapters: ReadonlyMap<string, tf.Tensor>,
  lora: LoraOptions,
): Promise<void> {
  await mkdir(dir, { recursive: true });
  const tensors = new Map<string, NamedTensor>();
  for (const [name, t] of adapters) {
    const [rows, cols] = t.shape;
    const data = t.dataSync() as Float32Array;
    const transposed = new Float32Array(data.length);
    for (let i = 0; i < rows; i++)
      for (let j = 0; j < cols; j++) transposed[j * rows + i] = data[i * cols + j];
    const peftName = `base_model.model.${name.replace(/\.weight\.lora_([AB])$/, ".lora_$1.weight")}`;
    tensors.set(peftName, { shape: [cols, rows], data: transposed });
  }
  await writeSafetensors(join(dir, "adapter_model.safetensors"), tensors);
  const config = {
    peft_type: "LORA",
    task_type: "CAUSAL_LM",
    r: lora.rank,
    lora_alpha: lora.alpha,
    target_modules: lora.targets ?? ["q_proj", "v_proj"],
    lora_dropout: 0,
    bias: "none",
    fan_in_fan_out: false,
    inference_mode: true,
  };
  await writeFile(join(dir, "adapter_config.json"), `${JSON.stringify(config, null, 2)}\n`);
}
