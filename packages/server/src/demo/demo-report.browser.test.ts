import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { type SliceReport, ValidationGates } from "@arc/core";
import type { StepRecord } from "@arc/rl";
import { type Browser, chromium, type Page } from "playwright-core";
import { chromiumLacks, chromiumPath, skipWithout } from "../../../../scripts/required-parts.mjs";
import { demoReportHtml } from "./demo-report.ts";
import type { DemoResult } from "./demo-result.ts";

const CHROMIUM = chromiumPath();

function step(n: number, reward: number, evalFailureRate?: number): StepRecord {
  return {
    step: n,
    algorithm: "dpo",
    loss: n === 0 ? null : 0.69 - n * 0.01,
    reward: n === 0 ? null : reward,
    accuracy: null,
    advantageMean: null,
    advantageStd: null,
    used: 8,
    skipped: 0,
    gradNorm: null,
    learningRate: 1e-4,
    tokens: 100,
    tokensPerSecond: 10,
    staleness: 0,
    generatorStep: n,
    elapsedS: n * 20,
    extra: {},
    ...(evalFailureRate === undefined ? {} : { evalFailureRate }),
  };
}

/** A slice of the validation report: `failures` of `n` for the baseline and the candidate. */
function slice(name: string, kind: SliceReport["kind"], n: number, base: number, cand: number): SliceReport {
  return {
    slice: name,
    kind,
    n,
    baselineFailureRate: base / n,
    candidateFailureRate: cand / n,
    judgedBy: { [kind === "safety" ? "safety:must_not_leak" : "verifier:toolcall"]: n },
    candidateFailureInterval: { lower: 0, upper: 1 },
    test: { regressions: 0, improvements: 0, pValue: 1, worse: false, threshold: 0.05 },
  };
}

/**
 * A demo outcome as `runDemo` returns it: a candidate that halved a live failure rate near 0.2 with one pattern
 * worse, so a chart fixed at 0..1 would leave the data in its bottom fifth.
 */
const result: DemoResult = {
  startedAt: "2026-11-21T04:00:00.000Z",
  wallS: 700,
  budgetS: 780,
  seed: 1,
  baseFailureRate: 0.21,
  finalFailureRate: 0.1,
  finalVersion: "toolcall-dpo-run1",
  newModelServed: true,
  targetMet: false,
  verdict: "failure rate 0.21 → 0.10, 1 pattern(s) worse: target not met (halve it with no pattern worse)",
  versions: [
    { id: "mv_a", name: "toolcall-base", status: "retired", n: 500, failures: 105, failureRate: 0.21 },
    { id: "mv_b", name: "toolcall-dpo-run1", status: "promoted", n: 300, failures: 30, failureRate: 0.1 },
  ],
  patterns: [
    {
      id: "pat_7f3a91",
      label: "truncation: book_table",
      baseIncidence: 0.12,
      finalIncidence: 0.02,
      verdict: "fixed",
    },
    {
      id: "pat_c0de42",
      label: "wrong_argument: get_weather.city",
      baseIncidence: 0.03,
      finalIncidence: 0.06,
      verdict: "worse",
    },
  ],
  patternsFixed: 1,
  patternsWorse: 1,
  ndr: 0.97,
  rollbacks: 0,
  validation: {
    decision: "pass",
    reasons: ["no slice significantly worse (pat_c0de42 p 0.40)"],
    gatesWhy: "the demo gates on not being worse",
    report: {
      decision: "pass",
      reasons: ["no slice significantly worse (pat_c0de42 p 0.40)"],
      checks: [],
      gates: ValidationGates.parse({}),
      scores: {
        functional: 0.8,
        baselineFunctional: 0.6,
        ndr: 0.97,
        regression: 0,
        safety: { total: 0, passed: 0, leaks: 0, newFailures: 0 },
        winRate: null,
        latency: { baselineMeanMs: 1, candidateMeanMs: 1, candidateP50Ms: 1 },
        tokens: { baselineMean: 10, candidateMean: 10 },
      },
      slices: [
        slice("pat_7f3a91", "pattern", 6, 6, 1),
        slice("pat_c0de42", "pattern", 6, 6, 3),
        slice("general", "general", 40, 0, 1),
      ],
    },
  },
  deployments: [
    { id: "dep_1", status: "promoted", stage: 2, share: 1, lastStep: { reason: "ramp complete" } },
  ],
  warmup: {
    runId: "sft1",
    steps: 200,
    plannedSteps: 300,
    maxSteps: 1000,
    secondsPerStep: 0.74,
    tokensPerSecond: 2079,
    heldOutTarget: 0.105,
    budgetS: 300,
    targetReachedAtStep: 200,
    heldOutFailureRate: 0.04,
    heldOutUpperBound: 0.088,
    stoppedAtDeadline: false,
    replans: [],
    records: [step(0, 0, 0.19), step(100, 0, 0.12), step(200, 0, 0.04)],
  },
  training: {
    runId: "run1",
    steps: 3,
    stoppedAtDeadline: false,
    records: [step(0, 0, 0.05), step(1, 0.2), step(2, 0.3), step(3, 0.45, 0.06)],
    pairRate: 1,
  },
  timeline: [
    { modelVersion: "toolcall-base", t: 0, n: 50, failures: 10 },
    { modelVersion: "toolcall-base", t: 60, n: 50, failures: 11 },
    { modelVersion: "toolcall-dpo-run1", t: 60, n: 10, failures: 1 },
    { modelVersion: "toolcall-dpo-run1", t: 120, n: 60, failures: 6 },
  ],
  timelineBucketS: 60,
  phases: [{ name: "platform", startS: 0, endS: 9, note: "server up" }],
  datasets: [{ id: "ds_1", kind: "eval", rows: 40 }],
  notes: ["a note <with> markup-like text"],
};

/** The numbers a chart's axis is labelled with, in drawing order: the y axis's are its right-aligned texts. */
async function ticks(page: Page, chart: string, axis: "x" | "y"): Promise<string[]> {
  return page
    .locator(axis === "y" ? `${chart} svg text[text-anchor="end"]` : `${chart} svg text.x-tick`)
    .allTextContents();
}

describe("report.html in a browser", { skip: skipWithout("chromium", chromiumLacks()) }, () => {
  let dir: string;
  let browser: Browser;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "arc-report-"));
    writeFileSync(join(dir, "report.html"), demoReportHtml(result));
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
  });
  after(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("renders the verdict, the figures and three drawn charts, loading nothing from elsewhere", async () => {
    const page = await browser.newPage({ viewport: { width: 1000, height: 1800 } });
    const requests: string[] = [];
    const errors: string[] = [];
    page.on("request", (r) => requests.push(r.url()));
    page.on("pageerror", (e) => errors.push(e.message));
    const url = pathToFileURL(join(dir, "report.html")).href;
    await page.goto(url);
    assert.deepEqual(requests, [url], "a self-contained file: no other request");
    assert.deepEqual(errors, []);
    assert.match((await page.textContent("#verdict")) ?? "", /0\.21 → 0\.10.*target not met/);
    assert.equal(await page.textContent("#fixed"), "1");
    assert.equal(await page.textContent("#worse"), "1");
    assert.equal(await page.textContent("#ndr"), "0.970");
    // failure rate by version: one line per version; held-out: warm-up and DPO; reward: DPO; patterns: 2 x 2 bars
    assert.equal(await page.locator("#chart-failure svg path").count(), 2);
    assert.equal(await page.locator("#chart-heldout svg path").count(), 2, "warm-up and DPO held-out");
    assert.equal(await page.locator("#chart-reward svg path").count(), 1, "DPO reward alone");
    assert.equal(await page.locator("#chart-patterns svg rect[fill]:not([width='12'])").count(), 4);
    for (const id of ["#chart-failure", "#chart-heldout", "#chart-reward", "#chart-patterns"]) {
      const box = await page.locator(`${id} svg`).boundingBox();
      assert.ok(box && box.width > 300 && box.height > 150, `${id} is drawn at a readable size`);
    }
    assert.match(await page.content(), /a note &lt;with&gt; markup-like text/, "text is escaped");
    await page.screenshot({ path: join(dir, "report.png"), fullPage: true });
    assert.ok(existsSync(join(dir, "report.png")));
    await page.close();
  });

  it("fits each chart's y axis to its data, with round ticks, and labels step counts with whole numbers", async () => {
    const page = await browser.newPage();
    await page.goto(pathToFileURL(join(dir, "report.html")).href);
    const fits = async (chart: string, dataMax: number) => {
      const labels = await ticks(page, chart, "y");
      const values = labels.map(Number);
      assert.ok(values.length >= 3, `${chart}: y ticks ${labels}`);
      assert.ok(
        values.every((v) => Number.isFinite(v)),
        `${chart}: y ticks ${labels}`,
      );
      const top = Math.max(...values);
      const step = values[1] - values[0];
      assert.ok(
        top >= dataMax && top < dataMax + step,
        `${chart}: top tick ${top} for data up to ${dataMax}`,
      );
      assert.equal(Math.min(...values), 0, `${chart}: y axis from 0`);
    };
    await fits("#chart-failure", 0.22);
    assert.ok(
      Math.max(...(await ticks(page, "#chart-failure", "y")).map(Number)) < 1,
      "not a fixed 0..1 axis",
    );
    await fits("#chart-heldout", 0.19);
    await fits("#chart-reward", 0.45);
    await fits("#chart-patterns", 0.12);
    for (const chart of ["#chart-heldout", "#chart-reward"]) {
      const labels = await ticks(page, chart, "x");
      assert.ok(labels.length >= 2, `${chart}: x ticks ${labels}`);
      for (const label of labels) assert.match(label, /^\d+$/, `${chart}: step tick ${label}`);
    }
    await page.close();
  });

  it("states the verdict rule beside the patterns and names validation slices by pattern label and judge", async () => {
    const page = await browser.newPage();
    await page.goto(pathToFileURL(join(dir, "report.html")).href);
    const rule = (await page.textContent("#verdict-rule")) ?? "";
    for (const word of ["fixed", "worse", "unchanged", "significant", "Holm"]) {
      assert.ok(rule.includes(word), `the rule names "${word}": ${rule}`);
    }
    const column = (n: number) =>
      page.locator("table").filter({ hasText: "candidate failure" }).locator(`tbody tr td:nth-child(${n})`);
    assert.deepEqual(await column(1).allTextContents(), [
      "truncation: book_table",
      "wrong_argument: get_weather.city",
      "general",
    ]);
    assert.deepEqual(await column(3).allTextContents(), [
      "verifier:toolcall",
      "verifier:toolcall",
      "verifier:toolcall",
    ]);
    const text = (await page.textContent("body")) ?? "";
    assert.ok(!text.includes("pat_"), "no pattern id on the page");
    await page.close();
  });

  it("leaves commands and file paths off the page", () => {
    const html = demoReportHtml(result);
    assert.doesNotMatch(html, /arc train|\/tmp\/|model\.path=|data\.prompts=/);
  });

  it("says the rates are the base model's own when no new model reached production", async () => {
    const path = join(dir, "report-unchanged.html");
    writeFileSync(path, demoReportHtml({ ...result, newModelServed: false }));
    const page = await browser.newPage();
    await page.goto(pathToFileURL(path).href);
    assert.match(
      (await page.textContent("body")) ?? "",
      /No new model reached production, so both failure rates/,
    );
    await page.close();
  });
});
