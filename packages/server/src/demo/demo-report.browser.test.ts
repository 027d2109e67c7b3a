import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import type { StepRecord } from "@arc/rl";
import { type Browser, chromium } from "playwright-core";
import { demoReportHtml } from "./demo-report.ts";
import type { DemoResult } from "./demo-result.ts";

const CHROMIUM = "/usr/bin/chromium";

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

/** A demo outcome as `runDemo` returns it: a candidate that halved the failure rate with one pattern worse. */
const result: DemoResult = {
  startedAt: "2026-11-21T04:00:00.000Z",
  wallS: 700,
  budgetS: 780,
  seed: 1,
  baseFailureRate: 0.9,
  finalFailureRate: 0.4,
  finalVersion: "toolcall-dpo-run1",
  newModelServed: true,
  targetMet: false,
  verdict: "failure rate 0.90 → 0.40, 1 pattern(s) worse: target not met (halve it with no pattern worse)",
  versions: [
    { id: "mv_a", name: "toolcall-base", status: "retired", n: 500, failures: 450, failureRate: 0.9 },
    { id: "mv_b", name: "toolcall-dpo-run1", status: "promoted", n: 300, failures: 120, failureRate: 0.4 },
  ],
  patterns: [
    { id: "p1", label: "truncation: book_table", baseIncidence: 0.4, finalIncidence: 0.1, verdict: "fixed" },
    {
      id: "p2",
      label: "wrong_argument: get_weather.city",
      baseIncidence: 0.1,
      finalIncidence: 0.2,
      verdict: "worse",
    },
  ],
  patternsFixed: 1,
  patternsWorse: 1,
  ndr: 0.97,
  rollbacks: 0,
  validation: null,
  deployments: [
    { id: "dep_1", status: "promoted", stage: 2, share: 1, lastStep: { reason: "ramp complete" } },
  ],
  warmup: {
    runId: "sft1",
    steps: 2,
    stoppedAtDeadline: false,
    records: [step(0, 0, 0.9), step(1, 0), step(2, 0, 0.8)],
    overrides: ["trainer.steps=2"],
  },
  training: {
    runId: "run1",
    steps: 3,
    stoppedAtDeadline: false,
    records: [step(0, 0, 0.95), step(1, 0.2), step(2, 0.3), step(3, 0.45, 0.6)],
    pairRate: 1,
    overrides: ["trainer.steps=3"],
  },
  timeline: [
    { modelVersion: "toolcall-base", t: 0, n: 50, failures: 45 },
    { modelVersion: "toolcall-base", t: 60, n: 50, failures: 46 },
    { modelVersion: "toolcall-dpo-run1", t: 60, n: 10, failures: 4 },
    { modelVersion: "toolcall-dpo-run1", t: 120, n: 60, failures: 24 },
  ],
  timelineBucketS: 60,
  phases: [{ name: "platform", startS: 0, endS: 9, note: "server up" }],
  datasets: [{ id: "ds_1", kind: "eval", rows: 40 }],
  notes: ["a note <with> markup-like text"],
};

describe("report.html in a browser", { skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is absent` }, () => {
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
    assert.match((await page.textContent("#verdict")) ?? "", /0\.90 → 0\.40.*target not met/);
    assert.equal(await page.textContent("#fixed"), "1");
    assert.equal(await page.textContent("#worse"), "1");
    assert.equal(await page.textContent("#ndr"), "0.970");
    // failure rate by version: one line per version; reward curve: reward and held-out lines; patterns: 2 x 2 bars
    assert.equal(await page.locator("#chart-failure svg path").count(), 2);
    assert.equal(
      await page.locator("#chart-reward svg path").count(),
      3,
      "warm-up held-out, DPO reward, DPO held-out",
    );
    assert.equal(await page.locator("#chart-patterns svg rect[fill]:not([width='12'])").count(), 4);
    for (const id of ["#chart-failure", "#chart-reward", "#chart-patterns"]) {
      const box = await page.locator(`${id} svg`).boundingBox();
      assert.ok(box && box.width > 300 && box.height > 150, `${id} is drawn at a readable size`);
    }
    assert.match(await page.content(), /a note &lt;with&gt; markup-like text/, "text is escaped");
    await page.screenshot({ path: join(dir, "report.png"), fullPage: true });
    assert.ok(existsSync(join(dir, "report.png")));
    await page.close();
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
