// The order scripts/test.mjs starts test files in.

/**
 * `files` longest first by `recordedTimes` (a full run's `{ file: seconds }`), so that the last files to start are
 * short ones and neither lane idles while the other finishes a long file; files it does not name start after the
 * named ones, by path.
 */
export function startOrder(files, recordedTimes) {
  const time = (file) => recordedTimes[file] ?? -1;
  return [...files].sort((a, b) => time(b) - time(a) || a.localeCompare(b));
}

/** A file a full run took less than this many seconds on is quick: scripts/test.mjs runs quick files in batches. */
export const QUICK_FILE_S = 10;

/** A batch takes quick files until their recorded times reach this many seconds: long enough to share its imports. */
export const BATCH_S = 20;

/**
 * The units scripts/test.mjs runs, each in a process of its own, in start order: the files `recordedTimes` names as
 * quick go, longest first, into batches of about `BATCH_S` seconds, and the batches start last; every other file is a
 * unit alone, a file with no recorded time too (it starts after the named ones), so a new file never shares a process
 * untimed.
 */
export function startUnits(files, recordedTimes) {
  const ordered = startOrder(files, recordedTimes);
  const isQuick = (file) => file in recordedTimes && recordedTimes[file] < QUICK_FILE_S;
  const batches = [];
  let batchS = BATCH_S;
  for (const file of ordered.filter(isQuick)) {
    if (batchS >= BATCH_S) {
      batches.push([]);
      batchS = 0;
    }
    batches.at(-1).push(file);
    batchS += recordedTimes[file];
  }
  // startOrder already puts the files it has no time for after the named ones
  const alone = ordered.filter((file) => !isQuick(file)).map((file) => [file]);
  return [...alone, ...batches];
}
