/** The POST and PUT routes of `arc serve` as the fuzz suite calls them: valid bodies, parameters, checks. */
import { recommendationActions } from "../../../dashboard/recommendation-actions.ts";
import { SUPPORT_FAMILY_SPEC } from "../../../families/__fixtures__/support-family.ts";
import { ANSWER_MS } from "./fuzzed-server.ts";
import { long, raw, str } from "./hostile-values.ts";
import { type Ctx, enc, type Json, type RouteSpec } from "./route-spec.ts";
import { otlpExport, otlpId, otlpSpans, trace } from "./sample-bodies.ts";

const idsOf = (sent: unknown, key: string): string[] => {
  const items = (sent as Json | null)?.[key];
  return Array.isArray(items)
    ? items.map((t) => (t as Json | null)?.id).filter((id): id is string => typeof id === "string")
    : [];
};
const modelIds = (x: Ctx) => [...x.ids.models.map((m) => m.id), "cand", "prod"];
/** The recommendations the Analytics page carries a button for. */
const RECOMMENDATION_KINDS = Object.keys(recommendationActions);

/** Every POST and PUT route `arc serve` registers, with valid bodies to mutate. */
export const WRITE_ROUTES: RouteSpec[] = [
  {
    method: "POST",
    path: "/v1/traces",
    runs: 40,
    ingest: true,
    bodies: [(x) => ({ traces: [trace(`t-${x.uid}-a`), trace(`t-${x.uid}-b`)] })],
    async accepted(_x, sent, answer, delta) {
      const inserted = answer.inserted as { traces?: number; steps?: number } | undefined;
      const problems = [];
      if ((delta.traces ?? 0) !== inserted?.traces || (delta.steps ?? 0) !== inserted?.steps) {
        problems.push(
          `answered inserted ${JSON.stringify(inserted)} but stored ${delta.traces ?? 0} traces and ${delta.steps ?? 0} steps`,
        );
      }
      const sentCount = Array.isArray((sent as Json | null)?.traces)
        ? ((sent as Json).traces as unknown[]).length
        : 0;
      const received = (answer.received as { traces?: number } | undefined)?.traces;
      if (received !== sentCount) problems.push(`sent ${sentCount} traces, answered received ${received}`);
      return problems;
    },
    readBack: (_x, sent) => [
      ...idsOf(sent, "traces")
        .slice(0, 3)
        .map((id) => ({ path: `/v1/traces/${enc(id)}`, must: 200 })),
      { path: "/v1/traces?limit=5" },
    ],
  },
  {
    method: "POST",
    path: "/v1/feedback",
    runs: 30,
    ingest: true,
    bodies: [
      (x) => [
        {
          id: `f-${x.uid}-a`,
          traceId: x.ready.fixture.traceId,
          score: 0.5,
          label: "thumbs_down",
          comment: "wrong order",
          createdAt: "2026-05-01T10:05:00Z",
        },
        {
          id: `f-${x.uid}-b`,
          traceId: x.ready.fixture.traceId,
          stepId: x.ready.fixture.stepId,
          correction: "It ships on Monday.",
        },
      ],
      (x) => ({ id: `f-${x.uid}`, traceId: x.ready.fixture.traceId, score: -1 }),
    ],
    async accepted(_x, _sent, answer, delta) {
      return (delta.feedback ?? 0) === answer.created
        ? []
        : [`answered created ${answer.created} but stored ${delta.feedback ?? 0} feedback rows`];
    },
    readBack: (x) => [{ path: `/v1/traces/${x.ready.fixture.traceId}`, must: 200 }],
  },
  {
    method: "POST",
    path: "/v1/otlp/v1/traces",
    runs: 40,
    ingest: true,
    bodies: [(x) => otlpExport(x.uid)],
    dictionary: [
      raw("null", "null"),
      raw("{}", "{}"),
      str('"abc"', "abc"),
      long(300),
      str("32 hex digits", "ffffffffffffffffffffffffffffffff"),
      str("base64 of 8 bytes", "AAAAAAAAAAA="),
      raw('{"stringValue":"\\ud800"}', '{"stringValue":"\\ud800"}'),
      raw('{"intValue":"abc"}', '{"intValue":"abc"}'),
      raw('{"intValue":3e9}', '{"intValue":3000000000}'),
      raw('{"doubleValue":1e300}', '{"doubleValue":1e300}'),
      raw('{"arrayValue":{"values":[null]}}', '{"arrayValue":{"values":[null]}}'),
      raw('{"kvlistValue":{"values":[null]}}', '{"kvlistValue":{"values":[null]}}'),
    ],
    async accepted(x, sent, answer, _delta, server) {
      const spans = otlpSpans(sent);
      const keys = new Set<string>();
      let unusable = 0;
      for (const span of spans) {
        const s = span as Json | null;
        const traceId = otlpId(s?.traceId, 16);
        const spanId = otlpId(s?.spanId, 8);
        if (traceId && spanId) keys.add(`${traceId}/${spanId}`);
        else unusable++;
      }
      const pairs = [...keys].map((k) => k.split("/"));
      const [{ n: stored }] = await server.call<{ n: number }[]>("sql", ANSWER_MS, {
        sql: `select count(*)::int as n from steps where tenant_id = $1
                and (trace_id, id) in (select * from unnest($2::text[], $3::text[]))`,
        params: [x.ready.tenant.id, pairs.map((p) => p[0]), pairs.map((p) => p[1])],
      });
      const rejected = Number((answer.partialSuccess as Json | undefined)?.rejectedSpans ?? 0);
      return stored + rejected >= keys.size + unusable
        ? []
        : [
            `of ${spans.length} spans (${keys.size} distinct ids), ${stored} are stored and ${rejected} reported rejected: ${keys.size + unusable - stored - rejected} lost`,
          ];
    },
    readBack: (_x, sent) => [
      ...[...new Set(otlpSpans(sent).map((s) => otlpId((s as Json | null)?.traceId, 16)))]
        .filter((id): id is string => id !== null)
        .slice(0, 3)
        .map((id) => ({ path: `/v1/traces/${id}` })),
    ],
  },
  {
    method: "POST",
    path: "/v1/chat/completions",
    runs: 30,
    gateway: true,
    ingest: true,
    bodies: [false, true].map((stream) => () => ({
      model: "arc",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Where is order 12?" },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "lookup", arguments: '{"order":12}' } },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: '{"status":"shipped"}' },
        { role: "user", content: [{ type: "text", text: "And when does it arrive?" }] },
      ],
      temperature: 0,
      max_tokens: 16,
      seed: 7,
      user: "u-1",
      stream,
      ...(stream ? { stream_options: { include_usage: true } } : {}),
    })),
    dictionary: [
      raw("null", "null"),
      long(150_000),
      raw('{"role":"user"}', '{"role":"user"}'),
      raw(
        '{"role":"user","content":[{"type":"image_url"}]}',
        '{"role":"user","content":[{"type":"image_url"}]}',
      ),
      raw('{"role":"\\ud800","content":"hi"}', '{"role":"\\ud800","content":"hi"}'),
      raw("n: 1e300", "1e300"),
    ],
    readBack: () => [{ path: "/v1/traces?limit=5" }, { path: "/v1/models" }],
  },
  {
    method: "PUT",
    path: "/v1/teaching",
    bodies: [
      () => ({
        teacher: "prod",
        mode: "adaptive",
        patterns: ["pat_1"],
        baselineShare: 0.1,
        ndr: {},
        templates: {},
        maxTeacherTokens: 64,
        maxSolutionTokens: 128,
      }),
      () => ({ teacher: "prod", mode: "off" }),
    ],
    readBack: () => [{ path: "/v1/teaching" }],
  },
  {
    method: "POST",
    path: "/v1/teaching/patterns/:id/reset",
    bodies: [() => undefined, () => ({})],
    params: [() => ["pat_1", "pat_does_not_exist"]],
    readBack: () => [{ path: "/v1/teaching" }],
  },
  {
    method: "POST",
    path: "/v1/model-versions",
    bodies: [
      (x) => ({
        name: `m-${x.uid}`,
        artifactDir: x.ready.fixture.checkpoint,
        parentId: "prod",
        lineage: {
          recipe: "toolcall-dpo",
          datasets: [{ id: "ds_1", version: "v1", kind: "prompts" }],
          steps: 20,
        },
        metrics: { reward: 0.5, loss: [0.9, 0.5] },
      }),
      (x) => ({ name: `m-${x.uid}`, status: "promoted", artifactDir: x.ready.fixture.checkpoint }),
    ],
    readBack: (_x, _sent, answer) => [
      { path: "/v1/model-versions" },
      ...(typeof answer.id === "string" ? [{ path: `/v1/model-versions/${answer.id}`, must: 200 }] : []),
    ],
  },
  {
    method: "POST",
    path: "/v1/eval-sets",
    bodies: [
      (x) => ({
        kind: "eval",
        version: `v-${x.uid}`,
        tenantId: "ignored",
        rows: [
          {
            id: "r1",
            question: "Where is order 12?",
            env: "toolcall",
            solution: { tool: "lookup", args: { order: 12 } },
            meta: { slice: "general", sourceTraceIds: [x.ready.fixture.traceId] },
          },
          { id: "r2", question: "What is 2+2?", env: "arith", solution: 4, meta: { slice: "pat_1" } },
        ],
        createdFrom: { seed: 1, patternIds: ["pat_1"], params: { size: 2 } },
        stats: { rows: 2 },
      }),
    ],
  },
  {
    method: "POST",
    path: "/v1/model-versions/:id/validate",
    bodies: [() => undefined],
    params: [modelIds],
    readBack: (_x, _sent, _answer, [id]) => [
      { path: `/v1/model-versions/${id}` },
      { path: "/v1/model-versions" },
    ],
  },
  {
    method: "POST",
    path: "/v1/model-versions/:id/approve",
    bodies: [() => undefined],
    params: [modelIds],
    readBack: (_x, _sent, _answer, [id]) => [{ path: `/v1/model-versions/${id}` }],
  },
  {
    method: "PUT",
    path: "/v1/release-settings",
    bodies: [
      () => ({
        gates: { minFunctional: 0.8, minNdr: 0.95, alpha: 0.05, safety: "clean", requireApproval: false },
        canary: {
          ramp: [0.1, 0.5, 1],
          minSamplesPerStage: 30,
          minControlSamples: 20,
          minDetectableIncrease: 0.1,
          alpha: 0.05,
          beta: 0.1,
          autoStart: true,
        },
      }),
      () => ({ canary: { ramp: [1] } }),
    ],
    readBack: () => [{ path: "/v1/release-settings" }, { path: "/v1/deployments" }],
  },
  {
    method: "POST",
    path: "/v1/deployments",
    bodies: [
      (x) => ({
        candidate: x.ids.models.find((m) => m.status === "validated")?.id ?? x.ready.fixture.candidate,
      }),
      (x) => ({ candidate: x.ready.fixture.candidate }),
    ],
    readBack: (_x, _sent, answer) => [
      { path: "/v1/deployments" },
      { path: "/v1/models" },
      ...(typeof answer.id === "string" ? [{ path: `/v1/deployments/${answer.id}`, must: 200 }] : []),
    ],
  },
  ...(["promote", "rollback"] as const).map(
    (action): RouteSpec => ({
      method: "POST",
      path: `/v1/deployments/:id/${action}`,
      bodies: [() => ({ reason: "by hand" }), () => undefined],
      params: [(x) => x.ids.deployments],
      readBack: () => [{ path: "/v1/deployments" }, { path: "/v1/models" }],
    }),
  ),
  {
    method: "PUT",
    path: "/v1/task-families/:env",
    bodies: [
      () => structuredClone(SUPPORT_FAMILY_SPEC),
      () => ({ tools: [{ name: "lookup", parameters: { type: "object" } }], verifier: "judge" }),
    ],
    params: [() => ["support", "toolcall"]],
    readBack: () => [{ path: "/v1/task-families" }],
  },
  {
    method: "PUT",
    path: "/v1/judges/rubric",
    bodies: [
      () => ({
        criteria: ["Quote the order id the user gave."],
        classes: [{ name: "wrong_order", description: "names another order", severity: "high" }],
        instructions: "A shop's support agent.",
      }),
    ],
    readBack: () => [{ path: "/v1/judges", must: 200 }],
  },
  {
    // no upstream is allowlisted on this server, so every body is refused: it must be refused cleanly
    method: "PUT",
    path: "/v1/judges/model",
    bodies: [() => ({ upstream: "local", model: "judge-1", callsPerMinute: 10, tokensPerMinute: 5_000 })],
    readBack: () => [{ path: "/v1/judges", must: 200 }],
  },
  {
    method: "POST",
    path: "/v1/judges/test",
    bodies: [(x) => ({ traceId: x.ready.fixture.traceId })],
    readBack: () => [{ path: "/v1/judges", must: 200 }],
  },
  {
    method: "POST",
    path: "/v1/annotations",
    bodies: [
      (x) => ({
        traceId: x.ready.fixture.traceId,
        label: "fail",
        class: "wrong_order",
        rationale: "names an order the user did not give",
      }),
      (x) => ({ traceId: x.ready.fixture.traceId, label: "pass", rationale: "right order" }),
    ],
    readBack: (x) => [{ path: `/v1/annotations?traceId=${enc(x.ready.fixture.traceId)}`, must: 200 }],
  },
  {
    method: "POST",
    path: "/v1/review-queues/:queue/items",
    params: [() => ["spot-checks"]],
    bodies: [(x) => ({ traceIds: [x.ready.fixture.traceId], reason: "weekly spot check" })],
    readBack: () => [{ path: "/v1/review-queues", must: 200 }],
  },
  {
    method: "POST",
    path: "/v1/judges/calibrate",
    bodies: [() => ({ limit: 5 })],
    readBack: () => [{ path: "/v1/judges", must: 200 }],
  },
  {
    method: "POST",
    path: "/v1/rewards",
    bodies: [
      () => ({
        kind: "partial",
        items: [
          {
            env: "toolcall",
            question: "Weather in Oslo in celsius?",
            answer: '{"tool":"get_weather","args":{"city":"Oslo","unit":"c"}}',
            solution: { tool: "get_weather", args: { city: "Oslo", unit: "c" } },
          },
        ],
      }),
    ],
    readBack: () => [{ path: "/v1/judges", must: 200 }],
  },
  {
    method: "PUT",
    path: "/v1/detectors",
    bodies: [
      () => ({
        disabled: ["latency_over_budget"],
        latencyBudgetMs: 20_000,
        loopThreshold: 3,
        negativeScoreBelow: 0,
        negativeLabels: ["thumbs_down"],
      }),
    ],
    readBack: () => [{ path: "/v1/detectors" }, { path: "/v1/patterns" }],
  },
  {
    method: "POST",
    path: "/v1/datasets",
    bodies: [
      (x) => ({ kind: "eval", fromPatterns: "all", seed: x.uid, perPattern: 5, generalSize: 5 }),
      (x) => ({
        kind: "prompts",
        size: 8,
        failureSamplingRatio: 0.8,
        failureSampling: "balanced",
        seed: x.uid,
      }),
      (x) => ({
        kind: "preferences",
        fromPatterns: ["pat_1"],
        seed: x.uid,
        candidates: { [x.ready.fixture.traceId]: [{ text: "It ships Monday.", source: "human" }] },
      }),
    ],
    readBack: (_x, _sent, answer) =>
      typeof answer.id === "string"
        ? [
            { path: "/v1/datasets" },
            { path: `/v1/datasets/${answer.id}`, must: 200 },
            { path: `/v1/datasets/${answer.id}/export?format=jsonl` },
          ]
        : [{ path: "/v1/datasets" }],
  },
  {
    method: "PUT",
    path: "/v1/dataset-schedules/:name",
    bodies: [() => ({ everyMs: 3_600_000, request: { kind: "prompts", size: 16 } })],
    params: [(x) => ["nightly", `s-${x.uid}`]],
    readBack: () => [{ path: "/v1/dataset-schedules" }],
  },
  {
    method: "POST",
    path: "/v1/runs",
    bodies: [
      () => ({ recipe: "toolcall-dpo", overrides: ["trainer.steps=2", "trainer.learningRate=0.0001"] }),
      () => ({ overrides: ["trainer.steps=3"] }),
    ],
    dictionary: [
      "__proto__.polluted=1",
      "constructor.prototype.polluted=1",
      "trainer.__proto__.polluted=1",
      "reward.module=/etc/passwd",
      "reward.module=../../../../tmp/x.mjs",
      "trainer.steps=1e300",
      "trainer.steps=-1",
      "trainer.steps=abc",
      "data.env=\ud800",
      `trainer.name=${"x".repeat(10_000)}`,
    ].map((s) => str(JSON.stringify(s).slice(0, 60), s)),
    readBack: (_x, _sent, answer) => [
      { path: "/v1/runs" },
      ...(typeof answer.id === "string" ? [{ path: `/v1/runs/${answer.id}`, must: 200 }] : []),
    ],
  },
  {
    method: "POST",
    path: "/v1/runs/:id/cancel",
    bodies: [() => undefined],
    params: [(x) => x.ids.runs],
    readBack: () => [{ path: "/v1/runs" }],
  },
  {
    method: "POST",
    path: "/v1/admin/tenants",
    key: "admin",
    bodies: [(x) => ({ name: `t${x.uid}` })],
    readBack: () => [{ path: "/v1/admin/tenants" }],
  },
  {
    method: "POST",
    path: "/v1/admin/tenants/:tenant/keys",
    key: "admin",
    bodies: [() => ({ name: "ci key" }), () => undefined],
    params: [(x) => [x.ready.tenant.name, x.ready.bystander.name, x.ready.tenant.id]],
    readBack: (_x, _sent, _answer, [tenant]) => [{ path: `/v1/admin/tenants/${tenant}/keys` }],
  },
  {
    method: "PUT",
    path: "/v1/analytics/settings",
    bodies: [
      () => ({ prices: { "arc-small": { prompt: 0.5, completion: 1.5 } }, costPerFailure: 2 }),
      () => ({}),
    ],
    readBack: () => [{ path: "/v1/analytics/settings", must: 200 }, { path: "/v1/analytics" }],
  },
  // the dashboard's forms: without its session cookie they sign nobody in and change nothing
  {
    method: "POST",
    path: "/ui/login",
    key: "none",
    runs: 10,
    bodies: [(x) => ({ key: x.ready.tenant.key }), () => ({ key: "" }), () => undefined],
    readBack: () => [{ path: "/v1/deployments" }],
  },
  { method: "POST", path: "/ui/logout", key: "session", runs: 5, bodies: [() => undefined] },
  {
    method: "POST",
    path: "/ui/tenants/view",
    key: "session",
    runs: 5,
    bodies: [(x) => ({ tenant: x.ready.tenant.id })],
  },
  {
    method: "POST",
    path: "/ui/traces/:id/feedback",
    key: "session",
    runs: 10,
    bodies: [() => ({ label: "fail", correction: "a better answer", comment: "wrong tool" }), () => ({})],
    params: [(x) => [...x.ids.traces, x.ready.fixture.traceId]],
    readBack: (_x, _sent, _answer, [trace]) => [{ path: `/v1/traces/${trace}` }],
  },
  {
    method: "POST",
    path: "/ui/traces/:id/annotations",
    key: "session",
    runs: 10,
    bodies: [() => ({ label: "fail", rationale: "called the wrong tool" }), () => ({})],
    params: [(x) => [...x.ids.traces, x.ready.fixture.traceId]],
    query: ["queue"],
    queryValues: { queue: () => ["judge-disagreements", "unlabelled"] },
    readBack: () => [{ path: "/v1/annotations" }],
  },
  {
    method: "POST",
    path: "/ui/recommendations/:kind",
    key: "session",
    runs: 10,
    bodies: [(x) => ({ id: x.ids.patterns[0] ?? "none" }), () => ({})],
    params: [() => RECOMMENDATION_KINDS],
    readBack: () => [{ path: "/v1/datasets" }],
  },
  ...(["promote", "rollback"] as const).map(
    (action): RouteSpec => ({
      method: "POST",
      path: `/ui/deployments/:id/${action}`,
      key: "session",
      runs: 10,
      bodies: [() => ({ reason: "by hand" }), () => undefined],
      params: [(x) => x.ids.deployments],
      readBack: () => [{ path: "/v1/deployments" }, { path: "/v1/models" }],
    }),
  ),
];
