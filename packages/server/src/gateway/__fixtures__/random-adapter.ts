import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { mulberry32, type NamedTensor, readHfCheckpoint, writeSafetensors } from "@arc/engine";

/**
 * Writes a LoRA adapter of rank 4 on `baseDir`'s q_proj and v_proj weights in PEFT's layout, with random A and B
 * (B is not zero, so each seed's adapter answers differently from the base and from the others).
 */
export async function writeRandomAdapter(baseDir: string, dir: string, seed: number): Promise<string> {
  const rank = 4;
  const random = mulberry32(seed);
  const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const { tensors: base } = await readHfCheckpoint(baseDir);
  const adapter = new Map<string, NamedTensor>();
  for (const [name, weight] of base) {
    if (!/\.(q_proj|v_proj)\.weight$/.test(name)) continue;
    const [rows, cols] = weight.shape;
    const stem = `base_model.model.${name.replace(/\.weight$/, "")}`;
    adapter.set(`${stem}.lora_A.weight`, {
      shape: [rank, cols],
      data: Float32Array.from({ length: rank * cols }, () => normal() / Math.sqrt(cols)),
    });
    adapter.set(`${stem}.lora_B.weight`, {
      shape: [rows, rank],
      data: Float32Array.from({ length: rows * rank }, () => normal()),
    });
  }
  await mkdir(dir, { recursive: true });
  await writeSafetensors(join(dir, "adapter_model.safetensors"), adapter);
  const config = {
    peft_type: "LORA",
    task_type: "CAUSAL_LM",
    r: rank,
    lora_alpha: 2 * rank,
    target_modules: ["q_proj", "v_proj"],
    lora_dropout: 0,
    bias: "none",
  };
  await writeFile(join(dir, "adapter_config.json"), JSON.stringify(config));
  return dir;
}
