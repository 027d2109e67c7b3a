// Types of scripts/skip-summary.mjs, for its test.

/** `skipped 3 (a skipped suite counts once): 2 × python: ...; 1 × chromium: ...`, or `skipped 0`. */
export declare function skipSummary(skips: { reason: string }[]): string;
/** `tests: 1450 passed, 0 failed, 2 skipped` over every outcome line of both runs. */
export declare function totalsLine(outcomes: { outcome: "pass" | "fail" | "skip" | "time" }[]): string;
/** `slowest files: test/a.test.ts 220 s, ...`: the files whose top-level tests took longest in all. */
export declare function slowestFilesLine(
  outcomes: { outcome: "pass" | "fail" | "skip" | "time"; file?: string; ms?: number }[],
  count?: number,
): string;
/** Each file's top-level tests' time in seconds, slowest first. */
export declare function fileTimes(
  outcomes: { outcome: "pass" | "fail" | "skip" | "time"; file?: string; ms?: number }[],
): { file: string; s: number }[];
