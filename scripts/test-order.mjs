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
