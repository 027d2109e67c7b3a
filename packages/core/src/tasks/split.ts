/**
 * Which slice of a task family to draw: `train` for training, `eval` for held-out judging with the
 * train distribution (never a train question: questions are partitioned by hash), `production` deliberately shifted (phrasings, slot values and tool mix that
 * train under-covers), so that a model trained on `train` fails there in recognizable ways.
 */
export type Split = "train" | "eval" | "production";

/** Every split, in a fixed order. */
export const SPLITS: readonly Split[] = ["train", "eval", "production"];
