import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { waitUntil } from "@arc/core/testing";
import { createArc } from "@arc/sdk";
import { context, trace } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import OpenAI from "openai";
import { type Browser, chromium, type Page } from "playwright-core";
import { chromiumLacks, chromiumPath, skipWithout } from "../../../../scripts/required-parts.mjs";
import {
  type GatewayOnTestProvider,
  startGatewayOnTestProvider,
} from "../serve/__fixtures__/gateway-on-test-provider.ts";
import { registerModelVersion } from "../store/model-registry.ts";
import type { TraceSummary } from "../store/trace-list.ts";

const SCREENSHOTS = join(import.meta.dirname, "../../../../test-output/dashboard");

describe("traces, a trace, sessions, users and review in Chromium, on arc serve with SDK, gateway and OTLP traffic", {
  skip: skipWithout("chromium", chromiumLacks()),
}, () => {
  let arc: GatewayOnTestProvider;
  let browser: Browser;
  let page: Page;
  let sdkTraceId = "";
  let aliasTraceId = "";
  let otlpTraceId = "";
  const errors: string[] = [];
  const api = async <T>(path: string, init?: { method: string; body: unknown }): Promise<T> => {
    const response = await fetch(`${arc.server.url}/v1${path}`, {
      method: init?.method ?? "GET",
      headers: { authorization: `Bearer ${arc.key}`, "content-type": "application/json" },
      body: init ? JSON.stringify(init.body) : undefined,
    });
    const json = await response.json();
    if (!response.ok) throw new Error(`${path}: ${response.status} ${JSON.stringify(json)}`);
    return json as T;
  };
  const shoot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });

  before(async () => {
    const started = Promise.all([
      startGatewayOnTestProvider().then((s) => {
        arc = s;
      }),
      chromium.launch({ executablePath: chromiumPath() }).then((b) => {
        browser = b;
      }),
    ]);
    for (const settled of await Promise.allSettled([started]))
      if (settled.status === "rejected") throw settled.reason;
    mkdirSync(SCREENSHOTS, { recursive: true });

    // gateway traffic: two users, one session of three turns
    arc.provider.reply = (body) => ({
      content: `Booked: ${JSON.stringify((body.messages as { content: string }[]).at(-1)?.content)}`,
      usage: { prompt_tokens: 21, completion_tokens: 6, total_tokens: 27 },
    });
    const gateway = new OpenAI({ baseURL: `${arc.server.url}/v1`, apiKey: arc.key, maxRetries: 0 });
    for (const [i, question] of ["Book a table for two", "Move it to 8 pm", "Add a cake"].entries())
      await gateway.chat.completions.create(
        { model: "arc", messages: [{ role: "user", content: `${question} (turn ${i})` }] },
        { headers: { "x-arc-session": "dinner-plans", "x-arc-user": "alice" } },
      );
    await gateway.chat.completions.create(
      { model: "arc", messages: [{ role: "user", content: "What is on my calendar?" }] },
      { headers: { "x-arc-user": "bob" } },
    );

    // an agent traced with the SDK: a system prompt, a tool call
    const sdk = createArc({ baseUrl: arc.server.url, apiKey: arc.key, flushIntervalMs: 20 });
    arc.provider.reply = () => ({
      content: null,
      toolCalls: [{ id: "call_9", name: "refund_order", arguments: '{"order":"A-1077","amount":42}' }],
      usage: { prompt_tokens: 48, completion_tokens: 12, total_tokens: 60 },
    });
    const wrapped = sdk.wrapOpenAI(new OpenAI({ baseURL: arc.provider.url, apiKey: "test" }));
    await sdk.trace(
      "refund-agent",
      async (handle) => {
        sdkTraceId = handle.traceId;
        await wrapped.chat.completions.create({
          model: "support-model",
          messages: [
            { role: "system", content: "You are a careful support agent." },
            { role: "user", content: "Please refund order A-1077, it arrived broken." },
          ],
          tools: [{ type: "function", function: { name: "refund_order", parameters: { type: "object" } } }],
        });
      },
      { userId: "carol", sessionId: "refund-chat", tags: ["support"] },
    );
    // the same agent's SDK-wrapped client calling the gateway by its alias `arc`: its copy of the call, which names
    // the model `arc` as requested and served, is stored before the gateway's (the gateway's pending traces written
    // first, its copy of this call queued for 250 ms while the SDK sends at once), so the step keeps the alias
    await arc.server.release.gateway.flush();
    arc.provider.reply = () => ({
      content: "Your order shipped.",
      usage: { prompt_tokens: 30, completion_tokens: 5, total_tokens: 35 },
    });
    const throughGateway = sdk.wrapOpenAI(
      new OpenAI({ baseURL: `${arc.server.url}/v1`, apiKey: arc.key, maxRetries: 0 }),
    );
    await sdk.trace("order-agent", async (handle) => {
      aliasTraceId = handle.traceId;
      await throughGateway.chat.completions.create({
        model: "arc",
        messages: [{ role: "user", content: "Where is order A-2000?" }],
      });
    });
    await sdk.shutdown();

    // an agent traced with OpenTelemetry: a chat span and a tool span with its arguments and result
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ "service.name": "travel-agent" }),
      spanProcessors: [
        new SimpleSpanProcessor(
          new OTLPTraceExporter({
            url: `${arc.server.url}/v1/otlp/v1/traces`,
            headers: { authorization: `Bearer ${arc.key}` },
          }),
        ),
      ],
    });
    const tracer = provider.getTracer("agent");
    const root = tracer.startSpan("invoke_agent travel", {
      attributes: { "gen_ai.operation.name": "invoke_agent" },
    });
    const inRoot = trace.setSpan(context.active(), root);
    const chat = tracer.startSpan(
      "chat",
      {
        attributes: {
          "gen_ai.operation.name": "chat",
          "gen_ai.request.model": "travel-model",
          "gen_ai.usage.input_tokens": 31,
          "gen_ai.usage.output_tokens": 9,
          "gen_ai.input.messages": JSON.stringify([
            { role: "user", parts: [{ type: "text", content: "Weather in Oslo?" }] },
          ]),
          "gen_ai.output.messages": JSON.stringify([
            {
              role: "assistant",
              parts: [{ type: "tool_call", id: "c1", name: "get_weather", arguments: { city: "Oslo" } }],
            },
          ]),
        },
      },
      inRoot,
    );
    chat.end();
    const tool = tracer.startSpan(
      "execute_tool get_weather",
      {
        attributes: {
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": "get_weather",
          "gen_ai.tool.call.arguments": JSON.stringify({ city: "Oslo" }),
          "gen_ai.tool.call.result": JSON.stringify({ tempC: -3 }),
        },
      },
      inRoot,
    );
    tool.end();
    root.end();
    await provider.forceFlush();
    await provider.shutdown();
    otlpTraceId = root.spanContext().traceId;

    // enough traces through the API for a second page
    await api("/traces", {
      method: "POST",
      body: {
        traces: Array.from({ length: 55 }, (_, i) => ({
          id: `bulk-${String(i).padStart(2, "0")}`,
          name: "bulk",
          startedAt: new Date(Date.now() - 3_600_000 - i * 1000).toISOString(),
          input: `bulk question ${i}`,
          output: `bulk answer ${i}`,
        })),
      },
    });

    const context_ = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context_.newPage();
    page.on("console", (m) => {
      if (m.type() === "error" && !m.text().includes("404")) errors.push(`${page.url()}: ${m.text()}`);
    });
    page.on("pageerror", (e) => errors.push(`${page.url()}: ${e.message}`));
    await page.goto(`${arc.server.url}/ui/login`);
    await page.fill("#key", arc.key);
    await page.press("#key", "Enter");
    await page.waitForURL(`${arc.server.url}/ui`);
  });
  after(async () => {
    await browser?.close();
    await arc?.close();
  });

  /** The trace ids the list shows, in order. */
  const listed = () =>
    page.locator("tr[data-trace]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-trace")));

  it("lists every trace, SDK, gateway and OTLP alike, and pages by cursor with the state in the URL", async () => {
    await page.goto(`${arc.server.url}/ui/traces`);
    await shoot("traces");
    const first = await listed();
    assert.equal(first.length, 50);
    assert.ok(first.includes(sdkTraceId), "the SDK's trace is listed");
    assert.ok(first.includes(otlpTraceId), "the OTLP trace is listed");
    const { data } = await api<{ data: TraceSummary[] }>("/traces?limit=500");
    assert.equal(data.length, 4 + 2 + 1 + 55);
    await page.getByRole("link", { name: "Next page →" }).click();
    await page.waitForURL(/cursor=/);
    const second = await listed();
    assert.equal(second.length, 12);
    assert.deepEqual(
      [...first, ...second],
      data.map((t) => t.id),
      "every trace once, newest first",
    );
  });

  it("searches text in messages and outputs, and filters by user, session and tokens, kept in the URL", async () => {
    await page.goto(`${arc.server.url}/ui/traces`);
    await page.fill("#f-q", "A-1077");
    await page.getByRole("button", { name: "Search" }).click();
    await page.waitForURL(/q=A-1077/);
    assert.deepEqual(await listed(), [sdkTraceId]);
    await page.fill("#f-q", "");
    await page.fill("#f-user", "alice");
    await page.fill("#f-minTokens", "27");
    await page.getByRole("button", { name: "Search" }).click();
    await page.waitForURL(/user=alice/);
    assert.equal((await listed()).length, 3);
    await page.reload();
    assert.equal((await listed()).length, 3, "a reload shows the same filtered list");
    assert.equal(await page.inputValue("#f-user"), "alice");
    await page.goto(`${arc.server.url}/ui/traces?session=dinner-plans&maxTokens=26`);
    assert.deepEqual(await listed(), []);
  });

  it("shows a trace as a conversation with its tool call, a span tree with a timeline, and per-step figures", async () => {
    await page.goto(`${arc.server.url}/ui/traces/${sdkTraceId}`);
    await shoot("trace-sdk");
    const conversation = page.locator("#conversation");
    assert.equal(
      await conversation.locator(".message.system .text").textContent(),
      "You are a careful support agent.",
    );
    assert.match(
      (await conversation.locator(".message.user .text").textContent()) ?? "",
      /refund order A-1077/,
    );
    const call = conversation.locator("[data-answer] table.tool-calls tbody tr");
    assert.equal(await call.locator("td").first().textContent(), "refund_order");
    assert.equal(await call.locator("td").nth(1).textContent(), '{"order":"A-1077","amount":42}');
    assert.equal(await page.locator('[data-figure="tokens"]').textContent(), "60");
    assert.equal(await page.locator("table.spans tbody tr").count(), 1);
    assert.match((await page.locator("table.spans tbody tr td").nth(4).textContent()) ?? "", /48 \/ 12/);
    assert.equal(await page.locator("main pre").count(), 0, "no JSON dumps");

    await page.goto(`${arc.server.url}/ui/traces/${otlpTraceId}`);
    await shoot("trace-otlp");
    const rows = page.locator("table.spans tbody tr");
    assert.equal(await rows.count(), 3, "the agent span, its chat and its tool call");
    const toolRow = rows.filter({ hasText: "get_weather" }).last();
    assert.match((await toolRow.textContent()) ?? "", /\{"city":"Oslo"\} → \{"tempC":-3\}/);
    assert.equal(await rows.locator("svg rect").count(), 3, "a timeline bar per step");
    assert.deepEqual(errors, []);
  });

  it("answers an unknown trace URL with an HTML page that says so", async () => {
    for (const path of ["/ui/traces/no-such-trace", "/ui/traces/a/b"]) {
      const response = await page.goto(`${arc.server.url}${path}`);
      assert.equal(response?.status(), 404, path);
      assert.match(response?.headers()["content-type"] ?? "", /text\/html/);
      assert.ok((await page.locator("nav").count()) === 1, `${path} keeps the dashboard's navigation`);
    }
    assert.match((await page.locator("[role=alert]").textContent()) ?? "", /No page at \/ui\/traces\/a\/b/);
  });

  it("shows a session's traces in order and a user's traces with their failure rate", async () => {
    await page.goto(`${arc.server.url}/ui/sessions/dinner-plans`);
    await shoot("session");
    const turns = await page.locator("tr[data-trace] td:nth-child(2)").allTextContents();
    assert.deepEqual(
      turns.map((t) => /turn (\d)/.exec(t)?.[1]),
      ["0", "1", "2"],
    );
    await page.goto(`${arc.server.url}/ui/users/alice`);
    await shoot("user");
    assert.equal(await page.locator('[data-figure="user-traces"]').textContent(), "3");
  });

  it("takes a person's review with a correction on a trace page, which fails the trace through the feedback path", async () => {
    const [bob] = (await api<{ data: TraceSummary[] }>("/traces?user=bob")).data;
    await page.goto(`${arc.server.url}/ui/traces/${bob.id}`);
    await page.fill("#review-label", "wrong_answer");
    await page.fill("#review-correction", "You have a dentist appointment at 3 pm.");
    await page.fill("#review-comment", "it should read the calendar");
    await page.getByRole("button", { name: "Save review" }).click();
    assert.equal(await page.getByRole("status").textContent(), "Review saved.");
    assert.match((await page.locator("table.feedback").textContent()) ?? "", /dentist appointment at 3 pm/);

    await waitUntil(
      async () =>
        (await api<{ data: TraceSummary[] }>("/traces?verdict=failed")).data.some((t) => t.id === bob.id),
      "the review to fail the trace and put it in a pattern",
      { timeoutMs: 20_000, intervalMs: 100 },
    );
    await page.goto(`${arc.server.url}/ui/traces/${bob.id}`);
    assert.equal(await page.locator('[data-figure="verdict"]').textContent(), "failed");
    await shoot("trace-reviewed");
    // an empty review is refused, naming what is missing
    await page.getByRole("button", { name: "Save review" }).click();
    assert.match(
      (await page.getByRole("alert").textContent()) ?? "",
      /refused: .*at least one of score, label or correction/,
    );
  });

  it("lists every session and every user with counts, failure rate and last seen, in keyset pages linking to each", async () => {
    await page.goto(`${arc.server.url}/ui/sessions`);
    await shoot("sessions");
    const cells = (row: string) => page.locator(`${row} td`).allTextContents();
    assert.deepEqual(
      await page.locator("tr[data-session] td:first-child").allTextContents(),
      ["refund-chat", "dinner-plans"],
      "the latest seen first",
    );
    assert.deepEqual((await cells('tr[data-session="dinner-plans"]')).slice(1, 5), ["3", "0", "–", "1"]);
    await page.getByRole("link", { name: "dinner-plans" }).click();
    assert.equal(new URL(page.url()).pathname, "/ui/sessions/dinner-plans");
    assert.equal(await page.locator("tr[data-trace]").count(), 3);

    await page.goto(`${arc.server.url}/ui/users?limit=2`);
    await shoot("users");
    const users = () => page.locator("tr[data-user] td:first-child").allTextContents();
    assert.deepEqual(await users(), ["carol", "bob"]);
    // bob's one trace failed on a person's review: a failure rate of 100%
    assert.deepEqual((await cells('tr[data-user="bob"]')).slice(1, 4), ["1", "1", "100.0%"]);
    assert.match((await cells('tr[data-user="bob"]'))[6], /^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/, "last seen");
    await page.getByRole("link", { name: "Next page →" }).click();
    assert.ok(new URL(page.url()).searchParams.get("cursor"), "the cursor is in the URL");
    assert.deepEqual(await users(), ["alice"]);
    assert.deepEqual((await cells('tr[data-user="alice"]')).slice(1, 2), ["3"]);
    assert.equal(await page.getByRole("link", { name: "Next page →" }).count(), 0, "the last page");
    await page.getByRole("link", { name: "alice" }).click();
    assert.equal(await page.locator('[data-figure="user-traces"]').textContent(), "3");
    await page.goBack();
    await page.getByRole("link", { name: "First page" }).click();
    assert.deepEqual(await users(), ["carol", "bob"]);
    assert.deepEqual(errors, []);
  });

  it("offers each recommendation as a button that does what it says: Build a dataset builds one", async () => {
    await page.goto(`${arc.server.url}/ui/analytics`);
    const recommendation = page.locator('[data-recommendation="growing_pattern_without_dataset"]');
    assert.match((await recommendation.textContent()) ?? "", /no dataset draws on it/);
    await recommendation.getByRole("button", { name: "Build a dataset" }).click();
    await page.waitForURL(/\/ui\/datasets\/ds_/);
    const built = await api<{ patternIds: string[]; kind: string }>(
      `/datasets/${page.url().split("/").pop()}`,
    );
    assert.equal(built.kind, "prompts");
    const [bob] = (await api<{ data: TraceSummary[] }>("/traces?user=bob")).data;
    assert.deepEqual(built.patternIds, [bob.verdict?.patternId]);
    await page.goto(`${arc.server.url}/ui/analytics`);
    assert.equal(await page.locator('[data-recommendation="growing_pattern_without_dataset"]').count(), 0);
  });

  it("puts the correction in the next PreferenceSet as the chosen answer", async () => {
    const { id } = await api<{ id: string }>("/datasets", {
      method: "POST",
      body: { kind: "preferences", fromPatterns: "all" },
    });
    const dataset = await api<{
      rows: { chosen: string; rejected: string; meta: { chosenSource: string } }[];
    }>(`/datasets/${id}`);
    const pair = dataset.rows.find((r) => r.chosen === "You have a dentist appointment at 3 pm.");
    assert.ok(pair, "the correction is a chosen answer");
    assert.equal(pair.meta.chosenSource, "human");
    assert.match(pair.rejected, /What is on my calendar/);
  });

  it("reads the Overview right: an axis spanning its window, a version's one colour, no 100% from failures alone", async () => {
    await page.goto(`${arc.server.url}/ui?hours=24`);
    await shoot("overview");
    const traffic = page.locator("figure").first();
    assert.deepEqual(await traffic.locator(".x-tick").allTextContents(), ["24", "18", "12", "6", "0"]);
    assert.match((await traffic.textContent()) ?? "", /hours before now/);
    // the legend names the version and draws it in the colour the trace list gives it
    const legend = traffic.locator("g", { hasText: "upstream-model" });
    const legendColour = await legend.locator("rect").getAttribute("fill");
    await page.goto(`${arc.server.url}/ui/traces?user=alice`);
    const listColour = await page.locator("tr[data-trace] svg.swatch rect").first().getAttribute("fill");
    assert.ok(
      legendColour && legendColour === listColour,
      `${legendColour} in the chart, ${listColour} in the list`,
    );
    // the one judged trace failed by review and nothing passed a check: no failure rate of the judged yet
    await page.goto(`${arc.server.url}/ui?hours=24`);
    assert.equal(await page.locator('[data-figure="failures"]').textContent(), "1");
    assert.equal(await page.locator('[data-figure="failure-rate"]').textContent(), "–");
    assert.match(
      (await page.locator('[data-figure="failure-rate-why"]').textContent()) ?? "",
      /only failures are judged/,
    );
  });

  it("prices calls from the operator's price table, the alias arc counted under the model version it reached", async () => {
    const { steps } = await api<{ steps: { llm?: { modelRequested?: string; modelServed?: string } }[] }>(
      `/traces/${aliasTraceId}`,
    );
    assert.deepEqual(
      steps.map((s) => [s.llm?.modelRequested, s.llm?.modelServed]),
      [["arc", "arc"]],
      "the SDK's copy of the call through the gateway, naming only the alias, is the one stored",
    );
    await api("/analytics/settings", {
      method: "PUT",
      body: { prices: { "upstream-model": { prompt: 1000, completion: 2000 } }, costPerFailure: null },
    });
    await page.goto(`${arc.server.url}/ui/analytics`);
    await shoot("analytics");
    const rows = page.locator("h2:has-text('Cost') + table tbody tr");
    assert.deepEqual(await rows.locator("td:first-child").allTextContents(), [
      "support-model-served",
      "travel-model",
      "upstream-model",
    ]);
    // five gateway calls: four of 21 prompt and 6 completion tokens, one of 30 and 5 (asked for as `arc` by the
    // SDK-wrapped client): 114 × $1000/M + 29 × $2000/M
    assert.equal(await rows.nth(2).locator("td").nth(3).textContent(), "$0.1720");
  });

  it("works through a review queue: each trace labelled pass or fail with a rationale, then the next", async () => {
    await api("/review-queues/spot-check/items", {
      method: "POST",
      body: { traceIds: [sdkTraceId, otlpTraceId], reason: "weekly spot check" },
    });
    await page.goto(`${arc.server.url}/ui/reviews`);
    await shoot("reviews");
    assert.equal(await page.locator('[data-queue="spot-check"] [data-figure="pending"]').textContent(), "2");
    await page.getByRole("link", { name: "spot-check" }).click();
    await page.getByRole("link", { name: "start with the oldest" }).click();
    const first = page.url();
    await page.getByLabel("pass", { exact: true }).check();
    await page.fill("#annotation-rationale", "refunds the order the user named");
    await page.getByRole("button", { name: "Save label" }).click();
    assert.equal(await page.getByRole("status").textContent(), "Label saved.");
    await page.getByRole("link", { name: "Next in the queue →" }).click();
    assert.notEqual(page.url(), first);
    await page.getByLabel("fail", { exact: true }).check();
    await page.fill("#annotation-class", "wrong_tool");
    await page.fill("#annotation-rationale", "the weather tool was not what the user asked for");
    await page.getByRole("button", { name: "Save label" }).click();
    assert.match((await page.getByRole("status").textContent()) ?? "", /Nothing else waits in spot-check/);
    const labels = [
      ...(await api<{ data: { label: string }[] }>(`/annotations?traceId=${sdkTraceId}`)).data,
      ...(await api<{ data: { label: string; class: string }[] }>(`/annotations?traceId=${otlpTraceId}`))
        .data,
    ];
    assert.deepEqual(labels.map((l) => l.label).sort(), ["fail", "pass"]);
    await page.goto(`${arc.server.url}/ui/reviews`);
    assert.equal(
      await page.locator('[data-queue="spot-check"]').count(),
      0,
      "a queue with nothing waiting is done",
    );
  });

  it("offers Promote… and Roll back… only on a running canary, and refuses them plainly elsewhere", async () => {
    const candidate = await registerModelVersion(arc.server.db, arc.tenantId, {
      name: "candidate",
      status: "validated",
      upstream: { baseUrl: arc.provider.url, model: "m2" },
      actor: "test",
    });
    // the deployer starts a validated candidate's canary by itself; the test starts it unless the deployer was first
    await api("/deployments", { method: "POST", body: { candidate: candidate.id } }).catch(() => undefined);
    const deployment = await waitUntil(
      async () => {
        const { active } = await api<{ active: { id: string; candidateId: string } | null }>("/deployments");
        return active?.candidateId === candidate.id ? active : null;
      },
      "the candidate's canary to run",
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    await page.goto(`${arc.server.url}/ui/deployments/${deployment.id}`);
    assert.equal(await page.getByRole("link", { name: "Promote…" }).count(), 1, "a canary can be promoted");
    await api(`/deployments/${deployment.id}/promote`, { method: "POST", body: {} });
    await page.goto(`${arc.server.url}/ui/deployments/${deployment.id}`);
    assert.equal(await page.getByRole("link", { name: "Promote…" }).count(), 0);
    assert.equal(await page.getByRole("link", { name: "Roll back…" }).count(), 0);
    for (const action of ["promote", "rollback"]) {
      const response = await page.goto(`${arc.server.url}/ui/deployments/${deployment.id}/${action}`);
      assert.equal(response?.status(), 409, action);
      assert.match(
        (await page.getByRole("alert").textContent()) ?? "",
        /is promoted: only a running canary can be (promoted|rolled back)/,
      );
      assert.equal(await page.getByRole("button", { name: /Confirm/ }).count(), 0);
    }
  });
});
