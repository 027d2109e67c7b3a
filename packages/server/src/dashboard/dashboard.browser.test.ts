import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { FailurePattern } from "@arc/core";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { chromiumLacks, chromiumPath, skipWithout } from "../../../../scripts/required-parts.mjs";
import type { TenantAnalytics } from "../analytics/tenant-analytics.ts";
import type { DatasetInfo } from "../failures/dataset-store.ts";
import type { TenantRun } from "../orchestrator/run-store.ts";
import { type DashboardServer, startDashboardServer } from "../serve/__fixtures__/dashboard-server.ts";
import type { ModelVersion } from "../store/model-registry.ts";
import { count, percent } from "./format.ts";
import { tenantPages } from "./page-shell.ts";
import { type TrafficAnswer, trafficTotals } from "./pages/overview-page.ts";

const CHROMIUM = chromiumPath();
const SCREENSHOTS = join(import.meta.dirname, "../../../../test-output/dashboard");

describe("the dashboard in Chromium, on arc serve after a short improvement cycle", {
  skip: skipWithout("chromium", chromiumLacks()),
}, () => {
  let arc: DashboardServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  /** Console errors and uncaught exceptions of every page visited. */
  const errors: string[] = [];

  before(async () => {
    // each is kept as soon as it is up, so that `after` closes the server even when the browser fails to start
    const server = startDashboardServer().then((started) => {
      arc = started;
    });
    const launched = chromium.launch({ executablePath: CHROMIUM }).then((started) => {
      browser = started;
    });
    for (const started of await Promise.allSettled([server, launched]))
      if (started.status === "rejected") throw started.reason;
    mkdirSync(SCREENSHOTS, { recursive: true });
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(`${page.url()}: ${m.text()}`);
    });
    page.on("pageerror", (e) => errors.push(`${page.url()}: ${e.message}`));
  });
  after(async () => {
    await browser?.close();
    await arc?.close();
  });

  /** The text of the element marked `data-figure="<name>"` (inside `scope` when given). */
  const figure = async (name: string, scope = "") =>
    (await page.locator(`${scope} [data-figure="${name}"]`.trim()).first().textContent()) ?? "";
  /** The text of the first element `selector` finds. */
  const text = async (selector: string) => (await page.locator(selector).first().textContent()) ?? "";

  it("sends a visitor without a session to sign in, refuses a wrong key and signs in with the tenant's key", async () => {
    await page.goto(`${arc.url}/`);
    assert.match(page.url(), /\/ui\/login$/);
    await page.fill("#key", "sk-arc-not-a-key");
    await page.press("#key", "Enter");
    assert.match(await text("[role=alert]"), /Unknown or revoked key/);
    // the refusal is a 401 page, which Chromium logs as a failed resource: the only console error expected
    assert.equal(errors.length, 1);
    assert.match(errors[0], /\/ui\/login: Failed to load resource: .* status of 401 \(Unauthorized\)$/);
    errors.length = 0;
    await page.fill("#key", arc.tenantKey);
    await page.press("#key", "Enter");
    await page.waitForURL(`${arc.url}/ui`);
    const cookie = (await context.cookies()).find((c) => c.name === "arc_session");
    assert.ok(
      cookie?.httpOnly && cookie.sameSite === "Strict",
      "the session cookie is HttpOnly and SameSite=Strict",
    );
  });

  it("renders every page with no console errors, and writes a screenshot of each", async () => {
    const runs = await arc.api<{ data: TenantRun[] }>("/runs");
    const patterns = await arc.api<{ data: FailurePattern[] }>("/patterns");
    const datasets = await arc.api<{ data: DatasetInfo[] }>("/datasets");
    const paths = [
      ...tenantPages.map((p) => p.path),
      `/ui/patterns/${patterns.data[0].id}`,
      `/ui/traces/${patterns.data[0].examples[0].traceId}`,
      `/ui/datasets/${datasets.data[0].id}`,
      `/ui/runs/${runs.data[0].id}`,
      `/ui/models/${arc.candidateId}`,
      `/ui/deployments/${arc.deploymentId}`,
    ];
    for (const path of paths) {
      const response = await page.goto(`${arc.url}${path}`);
      assert.equal(response?.status(), 200, path);
      assert.ok((await text("h1")).length > 0, `${path} has a heading`);
      await page.screenshot({
        path: join(SCREENSHOTS, `${path.slice(1).replaceAll("/", "_")}.png`),
        fullPage: true,
      });
    }
    assert.deepEqual(errors, []);
  });

  it("shows the API's figures: traffic, patterns, datasets, runs, models and the canary", async () => {
    await page.goto(`${arc.url}/ui?hours=1`);
    const totals = trafficTotals((await arc.api<TrafficAnswer>("/traffic?hours=1&buckets=48")).points);
    assert.ok(totals.traces >= 80);
    assert.equal(await figure("traces"), count(totals.traces));
    assert.equal(await figure("judged"), count(totals.judged));
    assert.equal(await figure("failure-rate"), percent(totals.failureRate));
    // the figures refresh in place while the page is open
    await arc.traffic(10);
    await page.waitForFunction(
      (want) => document.querySelector('[data-figure="traces"]')?.textContent === want,
      count(totals.traces + 10),
      { timeout: 15_000 },
    );

    await page.goto(`${arc.url}/ui/patterns`);
    for (const p of (await arc.api<{ data: FailurePattern[] }>("/patterns")).data)
      assert.equal(await figure("failures", `[data-pattern="${p.id}"]`), count(p.count));

    await page.goto(`${arc.url}/ui/datasets`);
    const { data: datasets } = await arc.api<{ data: DatasetInfo[] }>("/datasets");
    assert.ok(datasets.length >= 2, "the run's prompt pool and eval set");
    for (const d of datasets)
      assert.equal(await figure("rows", `[data-dataset="${d.id}"]`), count(d.rowCount));

    await page.goto(`${arc.url}/ui/runs`);
    const { data: runs } = await arc.api<{ data: TenantRun[] }>("/runs");
    for (const r of runs)
      assert.equal(await page.locator(`[data-run="${r.id}"] .status`).textContent(), r.status);

    await page.goto(`${arc.url}/ui/models`);
    const { data: models } = await arc.api<{ data: ModelVersion[] }>("/model-versions");
    for (const m of models) assert.equal(await figure("status", `[data-model="${m.id}"]`), m.status);
    const lineage = page.locator("figure svg a");
    assert.ok(
      (await lineage.count()) >= 5,
      "patterns, datasets, the run, two models and the deployment are drawn",
    );

    await page.goto(`${arc.url}/ui/analytics`);
    const analytics = await arc.api<TenantAnalytics>("/analytics");
    assert.equal(await figure("fix-rate"), percent(analytics.fixSuccess.rate));
    assert.equal(await figure("failures-avoided"), String(Number(analytics.cost.failuresAvoided.toFixed(1))));
    for (const v of analytics.improvement)
      assert.equal(await figure("failure-rate", `[data-model="${v.modelVersion}"]`), percent(v.failureRate));

    await page.goto(`${arc.url}/ui/teaching`);
    const teaching = await arc.api<{
      patterns: { patternId: string; decision: { ndr: number | null } | null }[];
    }>("/teaching");
    const taught = teaching.patterns.filter((p) => p.decision);
    assert.ok(taught.length > 0, "the NDR monitor has measured taught calls");
    for (const p of taught)
      assert.equal(await figure("ndr", `[data-pattern="${p.patternId}"]`), percent(p.decision?.ndr));

    await page.goto(`${arc.url}/ui/deployments`);
    const { active } = await arc.api<{ active: { share: number } }>("/deployments");
    assert.equal(await figure("canary-share"), percent(active.share));
  });

  it("rolls back by keyboard, with a confirmation, and the gateway then routes to the previous model", async () => {
    await page.goto(`${arc.url}/ui/deployments/${arc.deploymentId}`);
    // the skip link comes first, then the header and navigation; the actions are reached with Tab alone
    await page.keyboard.press("Tab");
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Skip to content");
    const rollback = page.getByRole("link", { name: "Roll back…" });
    for (let i = 0; i < 40 && !(await rollback.evaluate((b) => b === document.activeElement)); i++)
      await page.keyboard.press("Tab");
    assert.ok(
      await rollback.evaluate((b) => b === document.activeElement),
      "Tab reaches the rollback button",
    );
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/rollback$/);
    assert.match(await text("main"), new RegExp(`All traffic goes back to ${arc.productionId}`));
    // nothing changed before the confirmation
    const before = await arc.api<{ deployment: { status: string } }>(`/deployments/${arc.deploymentId}`);
    assert.equal(before.deployment.status, "canary");
    await page.locator("#reason").focus();
    await page.keyboard.type("dashboard rollback test");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    await page.waitForURL(`${arc.url}/ui/deployments/${arc.deploymentId}/rollback`);
    assert.equal(await page.getByRole("status").textContent(), "Rolled back.");
    assert.equal(await figure("deployment-status"), "rolled_back");

    const after = await arc.api<{
      deployment: { status: string };
      audit: { action: string; actor: string; evidence: { reason?: string } }[];
    }>(`/deployments/${arc.deploymentId}`);
    assert.equal(after.deployment.status, "rolled_back");
    const entry = after.audit.find((a) => a.action === "rollback");
    assert.ok(entry?.actor.startsWith("user:"), "the audit log names the dashboard user's key");
    const served = await arc.traffic(20);
    assert.deepEqual(new Set(served), new Set([arc.productionId]));
    assert.deepEqual(errors, []);
  });

  it("moves through the navigation by keyboard, the current page marked", async () => {
    await page.goto(`${arc.url}/ui`);
    await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    assert.equal(
      await page.evaluate(() => document.activeElement?.id),
      "main",
      "the skip link moves focus to main",
    );
    await page.goto(`${arc.url}/ui`);
    const patterns = page.getByRole("link", { name: "Patterns", exact: true });
    for (let i = 0; i < 10 && !(await patterns.evaluate((a) => a === document.activeElement)); i++)
      await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    await page.waitForURL(`${arc.url}/ui/patterns`);
    assert.equal(await page.locator('nav [aria-current="page"]').textContent(), "Patterns");
  });

  it("lets an admin see every tenant and view one's pages", async () => {
    const admin = await browser.newContext();
    const adminPage = await admin.newPage();
    await adminPage.goto(`${arc.url}/ui/login`);
    await adminPage.fill("#key", arc.adminKey);
    await adminPage.press("#key", "Enter");
    await adminPage.waitForURL(`${arc.url}/ui/tenants`);
    await adminPage.getByRole("button", { name: "View default" }).click();
    await adminPage.waitForURL(`${arc.url}/ui`);
    const totals = trafficTotals((await arc.api<TrafficAnswer>("/traffic?hours=24&buckets=48")).points);
    assert.equal(await adminPage.locator('[data-figure="traces"]').textContent(), count(totals.traces));
    await admin.close();
  });

  it("refuses a form post from another origin, and signs out", async () => {
    const cookie = (await context.cookies()).find((c) => c.name === "arc_session");
    const forged = await fetch(`${arc.url}/ui/deployments/${arc.deploymentId}/promote`, {
      method: "POST",
      headers: {
        origin: "http://evil.example",
        "content-type": "application/x-www-form-urlencoded",
        cookie: `arc_session=${cookie?.value}`,
      },
      body: "reason=x",
    });
    assert.equal(forged.status, 403);
    await page.goto(`${arc.url}/ui`);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/\/ui\/login$/);
    await page.goto(`${arc.url}/ui/patterns`);
    assert.match(page.url(), /\/ui\/login$/);
  });
});
