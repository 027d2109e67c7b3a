// The lines scripts/test.mjs ends with: the skipped tests by reason, then the totals.

/** `skipped 3 (a skipped suite counts once): 2 × python: no .venv/bin/python; 1 × chromium: ...`, or `skipped 0`. */
export function skipSummary(skips) {
  if (skips.length === 0) return "skipped 0";
  const byReason = new Map();
  for (const { reason } of skips) byReason.set(reason, (byReason.get(reason) ?? 0) + 1);
  const counts = [...byReason].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return `skipped ${skips.length} (a skipped suite counts once): ${counts.map(([reason, n]) => `${n} × ${reason}`).join("; ")}`;
}

/** `tests: 1450 passed, 0 failed, 2 skipped` over every outcome line of both runs (a failed suite counts too). */
export function totalsLine(outcomes) {
  const count = (outcome) => outcomes.filter((o) => o.outcome === outcome).length;
  return `tests: ${count("pass")} passed, ${count("fail")} failed, ${count("skip")} skipped`;
}

/**
 * `slowest files: test/a.test.ts 220 s, ...`: the `count` files whose top-level tests took longest in all (module
 * loading not counted), so that a slow suite shows where its time goes.
 */
export function slowestFilesLine(outcomes, count = 8) {
  const slowest = fileTimes(outcomes).slice(0, count);
  return `slowest files: ${slowest.map(({ file, s }) => `${file} ${Math.round(s)} s`).join(", ")}`;
}

/** Each file's top-level tests' time in seconds, slowest first, paths relative to the working directory. */
export function fileTimes(outcomes) {
  const byFile = new Map();
  for (const { outcome, file, ms } of outcomes) {
    if (outcome === "time" && file) byFile.set(file, (byFile.get(file) ?? 0) + ms);
  }
  const cwd = `${process.cwd()}/`;
  return [...byFile]
    .sort((a, b) => b[1] - a[1])
    .map(([file, ms]) => ({ file: file.replace(cwd, ""), s: Math.round(ms / 100) / 10 }));
}
