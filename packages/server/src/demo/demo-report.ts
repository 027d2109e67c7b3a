import { barChartSvg, esc, lineChartSvg, type Series, type StepRecord } from "@arc/rl";
import type { DemoResult } from "./demo-result.ts";
import { PATTERN_VERDICT_RULE } from "./pattern-verdicts.ts";

function num(v: number | null | undefined, digits = 3): string {
  return v === null || v === undefined ? "–" : v.toFixed(digits);
}

function table(head: string[], rows: string[][]): string {
  return `<table><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join("")}</tr></thead><tbody>${rows
    .map((r) => `<tr>${r.map((c) => `<td>${esc(c)}</td>`).join("")}</tr>`)
    .join("")}</tbody></table>`;
}

/** The warm-up's plan, its stopping rule and where it ended. */
function warmupParagraph(result: DemoResult): string {
  const w = result.warmup;
  if (!w) return "";
  const ended =
    w.targetReachedAtStep !== null
      ? `stopped at step ${w.targetReachedAtStep}, where the held-out failure rate's 95% upper bound reached the target ${num(w.heldOutTarget)}`
      : w.stoppedAtDeadline
        ? "stopped at its time budget"
        : `ran its plan${w.heldOutTarget === null ? "" : ` without reaching the held-out target ${num(w.heldOutTarget)}`}`;
  const speed =
    w.secondsPerStep === null
      ? ""
      : ` at ${w.secondsPerStep.toFixed(2)} s a step${w.tokensPerSecond === null ? "" : ` (${w.tokensPerSecond.toFixed(0)} training tokens/s)`}`;
  const replanned = w.replans
    .map(
      (r) =>
        `; at step ${r.atStep} the machine had slowed to ${r.secondsPerStep.toFixed(2)} s a step, so it went on from that checkpoint with a plan of ${r.plannedSteps} steps`,
    )
    .join("");
  return `<p>${esc(`SFT warm-up ${w.runId} on the reference answers of failed prompts and passed traffic: ${w.steps} of ${w.plannedSteps} planned steps${speed}${replanned}; it ${ended}. Held-out failure rate at its last judgement: ${num(w.heldOutFailureRate)} (95% upper bound ${num(w.heldOutUpperBound)}). DPO started from its checkpoint.`)}</p>`;
}

/** `text` with each pattern id in it replaced by the pattern's label, quoted. */
function labelled(text: string, labels: Map<string, string>): string {
  return [...labels].reduce((t, [id, label]) => t.split(id).join(`"${label}"`), text);
}

/** The live failure rate of each model version over the demo, one line per version. */
function failureChart(result: DemoResult): string {
  const byVersion = new Map<string, Series>();
  for (const p of result.timeline) {
    if (p.n === 0) continue;
    const s = byVersion.get(p.modelVersion) ?? { name: p.modelVersion, points: [] };
    s.points.push({ x: (p.t + result.timelineBucketS / 2) / 60, y: p.failures / p.n });
    byVersion.set(p.modelVersion, s);
  }
  return lineChartSvg({
    title: "Live failure rate by model version",
    series: [...byVersion.values()],
    xLabel: `minutes since start (buckets of ${result.timelineBucketS} s)`,
    yLabel: "failure rate",
    yMin: 0,
  });
}

/** The held-out failure rate during the SFT warm-up and DPO, on one axis of optimizer steps. */
function heldOutChart(result: DemoResult): string {
  const warmupRecords = result.warmup?.records ?? [];
  // DPO's steps continue, on one axis, from the warm-up step whose checkpoint it started from
  const dpoOffset = result.warmup ? (result.warmup.targetReachedAtStep ?? result.warmup.steps) : 0;
  const records = result.training?.records ?? [];
  const heldOut = (rs: StepRecord[], offset: number) =>
    rs
      .filter((r) => r.evalFailureRate !== undefined)
      .map((r) => ({ x: offset + r.step, y: r.evalFailureRate as number }));
  return lineChartSvg({
    title: "Held-out failure rate during training",
    series: [
      ...(result.warmup ? [{ name: "SFT warm-up", points: heldOut(warmupRecords, 0) }] : []),
      { name: "DPO", points: heldOut(records, dpoOffset) },
    ],
    xLabel: result.warmup ? "optimizer step (SFT warm-up, then DPO)" : "optimizer step",
    yLabel: "held-out failure rate",
    yMin: 0,
    xIntegers: true,
  });
}

/** DPO's mean rollout reward at each step. */
function rewardChart(result: DemoResult): string {
  const records = result.training?.records ?? [];
  return lineChartSvg({
    title: "DPO rollout reward per step",
    series: [
      {
        name: "DPO: mean rollout reward",
        points: records.filter((r) => r.reward !== null).map((r) => ({ x: r.step, y: r.reward as number })),
      },
    ],
    xLabel: "DPO step",
    yLabel: "mean rollout reward",
    xIntegers: true,
  });
}

/** The ten largest patterns' live incidence before and after, numbered as the pattern table numbers them. */
function patternChart(result: DemoResult): string {
  // largest first (the order of the pipeline's pattern list)
  const shown = result.patterns.slice(0, 10);
  return barChartSvg({
    title: "Per-pattern live incidence before and after",
    categories: shown.map((_, i) => `#${i + 1}`),
    series: [
      { name: "base model", values: shown.map((p) => p.baseIncidence) },
      { name: `final (${result.finalVersion})`, values: shown.map((p) => p.finalIncidence) },
    ],
    yLabel: "failures of the pattern per call",
  });
}

/** The per-pattern table: the 25 largest, and a line counting the rest. */
function patternTable(result: DemoResult): string {
  const rest = result.patterns.slice(25);
  return `${table(
    ["#", "pattern", "base incidence", "final incidence", "verdict"],
    result.patterns
      .slice(0, 25)
      .map((p, i) => [String(i + 1), p.label, num(p.baseIncidence), num(p.finalIncidence), p.verdict]),
  )}
${result.patterns.length > 25 ? `<p class="note">…and ${rest.length} smaller patterns (${result.patterns.filter((p) => p.verdict === "fixed").length} fixed, ${result.patterns.filter((p) => p.verdict === "worse").length} worse in all).</p>` : ""}`;
}

/** The validation's decision, gates, reasons and per-slice table, patterns named by `labels`. */
function validationSection(result: DemoResult, labels: Map<string, string>): string {
  const v = result.validation;
  if (!v) return "<p>No validation ran.</p>";
  return `<p>Decision: <b>${esc(v.decision)}</b>. Gates used: <code>${esc(JSON.stringify(v.report.gates))}</code></p><p class="note">${esc(v.gatesWhy)}</p><ul>${v.reasons.map((r) => `<li>${esc(labelled(r, labels))}</li>`).join("")}</ul>${table(
    ["slice", "items", "judged by", "base failure", "candidate failure", "worse?"],
    v.report.slices.map((s) => [
      s.kind === "pattern" ? (labels.get(s.slice) ?? s.slice) : s.slice,
      String(s.n),
      Object.keys(s.judgedBy ?? {}).join(", "),
      num(s.baselineFailureRate),
      num(s.candidateFailureRate),
      s.test.worse ? "yes" : "no",
    ]),
  )}`;
}

/** The canary's deployments, the phases and the datasets, as tables (phase notes with patterns named by `labels`). */
function runTables(result: DemoResult, labels: Map<string, string>): string {
  return `<h2>Canary</h2>
${table(
  ["deployment", "status", "stage", "share", "last decision"],
  result.deployments.map((d) => [
    d.id,
    d.status,
    String(d.stage + 1),
    `${(d.share * 100).toFixed(0)}%`,
    String((d.lastStep as { reason?: string } | null)?.reason ?? ""),
  ]),
)}
<h2>Phases</h2>
${table(
  ["phase", "from (s)", "to (s)", "what happened"],
  result.phases.map((p) => [p.name, p.startS.toFixed(0), p.endS.toFixed(0), labelled(p.note, labels)]),
)}
<h2>Datasets</h2>
${table(
  ["dataset", "kind", "rows"],
  result.datasets.map((d) => [d.id, d.kind, String(d.rows)]),
)}`;
}

/** The demo's report: one self-contained HTML file (inline CSS and SVG charts drawn here, no scripts, no fetches). */
export function demoReportHtml(result: DemoResult): string {
  const labels = new Map(result.patterns.map((p) => [p.id, p.label]));
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Arc demo report</title>
<style>
body{font-family:system-ui,sans-serif;max-width:960px;margin:24px auto;padding:0 16px;color:#222}
h1{font-size:24px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ddd}
.verdict{padding:10px 14px;border-radius:6px;font-weight:600;background:${result.targetMet ? "#e8f6ec" : "#fdecea"}}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:4px 8px;font-size:13px;text-align:left}
.fig{margin:12px 0}.note{color:#555;font-size:13px}.legend{font-size:13px;background:#f5f5f5;padding:6px 10px;border-radius:4px}
</style></head><body>
<h1>Arc demo report</h1>
<p class="verdict" id="verdict">${esc(result.verdict)}</p>
<p>Started ${esc(result.startedAt)}, ${result.wallS.toFixed(0)} s of a ${result.budgetS.toFixed(0)} s budget, seed ${result.seed}.
${
  result.newModelServed
    ? "Base failure rate: live, during the baseline phase; final: live, the production model after the last deployment decision."
    : "No new model reached production, so both failure rates are the base model's, live over the whole demo, and the per-pattern chart compares the base with itself."
}</p>
<h2>Model versions</h2>
${table(
  ["model version", "status", "judged calls", "failures", "failure rate"],
  result.versions.map((x) => [x.name, x.status, String(x.n), String(x.failures), num(x.failureRate)]),
)}
<p>Patterns fixed: <b id="fixed">${result.patternsFixed}</b>, worse: <b id="worse">${result.patternsWorse}</b> · NDR: <b id="ndr">${num(result.ndr)}</b> · rollbacks: ${result.rollbacks}</p>
<h2>Failure rate over time</h2><div class="fig" id="chart-failure">${failureChart(result)}</div>
<h2>Training</h2>
${warmupParagraph(result)}
<p>${result.training ? esc(`DPO run ${result.training.runId}: ${result.training.steps} steps${result.training.stoppedAtDeadline ? " (stopped at its time budget)" : ""}; pairs formed in ${result.training.pairRate === null ? "–" : `${(result.training.pairRate * 100).toFixed(0)}%`} of prompt groups.`) : "no training"}</p>
<div class="fig" id="chart-heldout">${heldOutChart(result)}</div>
<div class="fig" id="chart-reward">${rewardChart(result)}</div>
<h2>Per-pattern before / after</h2>
<p class="legend" id="verdict-rule"><b>Verdicts.</b> ${esc(PATTERN_VERDICT_RULE)}</p>
<div class="fig" id="chart-patterns">${patternChart(result)}</div>
${patternTable(result)}
<h2>Validation</h2>
${validationSection(result, labels)}
${runTables(result, labels)}
${result.notes.length ? `<h2>Notes</h2><ul>${result.notes.map((n) => `<li>${esc(n)}</li>`).join("")}</ul>` : ""}
</body></html>
`;
}
