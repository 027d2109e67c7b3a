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
