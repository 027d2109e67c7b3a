// Types of scripts/test-order.mjs, for its test.

/** `files` longest first by a full run's `{ file: seconds }`, then the files it does not name, by path. */
export declare function startOrder(files: string[], recordedTimes: Record<string, number>): string[];

/** A file a full run took less than this many seconds on is quick, and runs in a batch. */
export declare const QUICK_FILE_S: number;

/** A batch takes quick files until their recorded times reach this many seconds. */
export declare const BATCH_S: number;

/** The runner's units in start order: each file alone, longest first, then the quick files' batches. */
export declare function startUnits(files: string[], recordedTimes: Record<string, number>): string[][];
