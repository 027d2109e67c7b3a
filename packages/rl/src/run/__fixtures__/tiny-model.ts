import { configForSize, initWeights, writeHfCheckpoint } from "@arc/engine";

/** Writes a freshly initialised `tiny` model (HF layout) to `dir`: a starting model for fast run tests. */
export async function writeTinyModel(dir: string, seed = 3): Promise<string> {
  const config = configForSize("tiny");
  await writeHfCheckpoint(dir, config, initWeights(config, seed));
  return dir;
}
