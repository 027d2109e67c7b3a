// Types of scripts/test-order.mjs, for its test.

/** `files` longest first by a full run's `{ file: seconds }`, then the files it does not name, by path. */
export declare function startOrder(files: string[], recordedTimes: Record<string, number>): string[];
