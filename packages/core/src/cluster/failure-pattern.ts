import type { FailureClass } from "../detect/index.ts";

/** A failed trace kept as an example of its pattern. */
export interface PatternExample {
  traceId: string;
  question: string;
  output?: string;
  evidence?: string;
  modelVersion?: string;
  at: string;
}

/** A group of similar failures: one mode a person recognizes, with a stable id and counts. */
export interface FailurePattern {
  /** Stable: assigned when the pattern appears and never changes as it grows. */
  id: string;
  tenantId: string;
  /** `class|path|signature`: the structural features every member shares. */
  key: string;
  class: FailureClass;
  path?: string;
  signature?: string;
  /** Names the mode, e.g. `wrong_argument: get_weather.unit` or `refusal: convert, currency`. */
  label: string;
  count: number;
  firstSeen: string;
  lastSeen: string;
  /** Members per day (`YYYY-MM-DD` of the trace's start). */
  countsByDay: Record<string, number>;
  /** Members per model version that answered (`unknown` when the trace did not say). */
  countsByModelVersion: Record<string, number>;
  /** Members per env id. */
  countsByEnv: Record<string, number>;
  /** The first few members, as a person would want to see them. */
  examples: PatternExample[];
  /** The most weighty request terms of the members (what the text feature sees). */
  topTerms: string[];
}
