import { join, resolve } from "node:path";

/** What `arc demo` is asked to do. */
export interface DemoOptions {
  /** The demo's own ARC_HOME; its previous demo data is removed at the start. */
  home: string;
  /** Wall-clock budget of the whole demo in minutes (the phases are cut to fit). */
  minutes: number;
  seed: number;
  /** Conversations per second of the simulated agent after training (validation, canary, measurement). */
  rate: number;
  /** Conversations per second while the candidate trains (the training runs on both cores). */
  trainingRate: number;
  /** Conversations per second before the first training (more traffic, more failures for the warm-up to learn). */
  baselineRate: number;
  /** DPO optimizer steps at most (the training phase also stops at its share of the budget). */
  trainSteps: number;
  /**
   * SFT warm-up steps at most before DPO (0: none); it plans as many as fit in its share of the training time and
   * stops sooner when its held-out failure rate reaches the target.
   */
  sftSteps: number;
  /** The base checkpoint (default: the demo family's committed base, `DEFAULT_BASE_MODEL`). */
  baseModel: string;
  /** Output budget of every model call: agent, validator, rollouts (default 96: the longest reference answer of the demo family is 84 byte tokens). */
  maxTokens?: number;
  /** More `key=value` recipe overrides after the demo's own (e.g. a smaller run in tests). */
  extraOverrides?: string[];
  /** Leave the platform running at the end. */
  serve: boolean;
  /** Progress output (a live line per phase). */
  out: NodeJS.WriteStream | { isTTY?: boolean; write(s: string): boolean };
}

/** Where the demo writes its files. */
export function demoPaths(home: string): { summary: string; report: string } {
  return { summary: join(resolve(home), "summary.json"), report: join(resolve(home), "report.html") };
}
