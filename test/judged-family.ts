import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { familyPrompt, jsonTaskFamily, type Task, type TaskFamily, toOpenAiTools } from "@arc/core";
import { generateToolcallTasks, toolcallFamily } from "@arc/core/families";
import { waitUntil } from "@arc/core/testing";
import { EmbeddedInferenceEngine, startEngineServer } from "@arc/engine";
import OpenAI from "openai";
import { loadServerConfig } from "../packages/server/src/config/server-config.ts";
import { toolcallEvalFixture } from "../packages/server/src/deploy/__fixtures__/toolcall-eval-fixture.ts";
import { TOOLCALL_JUDGE_RUBRIC } from "../packages/server/src/judges/__fixtures__/toolcall-judge-rubric.ts";
import type { OrchestratorConfigInput } from "../packages/server/src/orchestrator/orchestrator-config.ts";
import { type RunningServer, startServer } from "../packages/server/src/serve/start-server.ts";
import { createApiKey } from "../packages/server/src/store/keys.ts";
import { listModelVersions, registerModelVersion } from "../packages/server/src/store/model-registry.ts";
import { createTenant } from "../packages/server/src/store/tenants.ts";

/** A tenant's own booking agent, registered as data with no verifier: only its judge can say what failed. */
const BOOKINGS_SPEC = {
  env: "bookings",
  description: "a booking assistant's tool calls",
  tools: toolcallFamily.tools.map(({ name, description, parameters }) => ({ name, description, parameters })),
  verifier: "judge",
};
const bookings: TaskFamily = jsonTaskFamily(BOOKINGS_SPEC);
const tasks: Task[] = generateToolcallTasks({ split: "production", seed: 31, count: 600 });

/** A server and the judge it calls; `close` stops both and removes the server's home. */
export interface JudgedServer {
  server: RunningServer;
  close(): Promise<void>;
}

/**
 * A server whose tenants' judge is the shipped judge, served as `arc engine serve` serves it, on an upstream the
 * operator allowlisted; with `orchestrator`, it also trains.
 */
export async function startJudgedServer(orchestrator?: OrchestratorConfigInput): Promise<JudgedServer> {
  const home = await mkdtemp(join(tmpdir(), "arc-judged-family-"));
  const judge = await startEngineServer(
    await EmbeddedInferenceEngine.load(resolve("models/toolcall-judge")),
    {
      modelId: "toolcall-judge",
    },
  );
  const upstreams = JSON.stringify({ judges: { baseUrl: judge.baseURL } });
  const server = await startServer(loadServerConfig({ ARC_UPSTREAMS: upstreams }, { home, port: 0 }), {
    release: { validatorIntervalMs: 300, deployerIntervalMs: 200, judge: { maxTokens: 128 } },
    ...(orchestrator ? { orchestrator } : {}),
  });
  return {
    server,
    async close() {
      await server.close();
      await judge.close();
      await rm(home, { recursive: true, force: true });
    },
  };
}

/**
 * A tenant with a shipped base in production (`toolcall-base` unless named), its family, the toolcall rubric and the
 * judge on its upstream.
 */
export async function judgedTenant(server: RunningServer, name: string, production = "toolcall-base") {
  const tenant = await createTenant(server.db, name);
  const { key } = await createApiKey(server.db, { role: "tenant", tenantId: tenant.id });
  const base = await registerModelVersion(server.db, tenant.id, {
    name: production,
    status: "promoted",
    artifactDir: resolve(`models/${production}`),
    actor: "test",
  });
  const put = async (path: string, body: unknown) => {
    const res = await fetch(`${server.url}/v1${path}`, {
      method: "PUT",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    assert.ok(res.ok, `${path}: ${res.status} ${await res.text()}`);
  };
  await put("/task-families/bookings", BOOKINGS_SPEC);
  await put("/judges/rubric", TOOLCALL_JUDGE_RUBRIC);
  await put("/judges/model", {
    upstream: "judges",
    model: "toolcall-judge",
    callsPerMinute: 6000,
    tokensPerMinute: 10_000_000,
  });
  // this family has no verifier and no reviewed traces to calibrate the judge on: the tenant trusts it uncalibrated
  await put("/detectors", { judgeMinKappa: null });
  return { tenantId: tenant.id, key, base };
}

/** A model's status once its validation moved it on (the validation is stored just before the move). */
export async function decidedStatus(
  server: RunningServer,
  tenantId: string,
  modelId: string,
): Promise<string> {
  const model = await waitUntil(
    async () =>
      (await listModelVersions(server.db, tenantId)).find(
        (m) => m.id === modelId && m.status !== "candidate",
      ),
    "the model's status after its validation",
    { timeoutMs: 30_000, intervalMs: 200 },
  );
  return model.status;
}

/** The tenant's agent's recorded requests as a reference-free EvalSet (only the judge can decide them), stored. */
export async function storeReferenceFreeEvalSet(server: RunningServer, tenantId: string, key: string) {
  const tools = toOpenAiTools(bookings.tools ?? []);
  const requests = generateToolcallTasks({ split: "eval", seed: 41, count: 24 });
  const evalSet = {
    ...toolcallEvalFixture(tenantId).evalSet,
    version: "sha256:bookings-reference-free",
    rows: requests.map((task, i) => ({
      id: `bookings-${i}`,
      env: "bookings",
      question: task.question,
      context: { messages: [{ role: "user", content: task.question }], tools },
      meta: { slice: "pat-bookings", sourceTraceIds: [] },
    })),
  };
  const stored = await fetch(`${server.url}/v1/eval-sets`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(evalSet),
  });
  assert.equal(stored.status, 201, await stored.text());
  return requests;
}

/** One production call of the tenant's agent through the gateway, per call of the returned function. */
export function bookingsAgent(server: RunningServer, key: string) {
  const openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key });
  const tools = toOpenAiTools(bookings.tools ?? []) as unknown as OpenAI.ChatCompletionTool[];
  let sent = 0;
  return async () => {
    const task = tasks[sent % tasks.length];
    await openai.chat.completions.create(
      {
        model: "arc",
        messages: familyPrompt(bookings, task) as OpenAI.ChatCompletionMessageParam[],
        tools,
        temperature: 1,
        seed: sent,
        max_tokens: 96,
      },
      { headers: { "x-arc-env": "bookings", "x-arc-trace-id": `bookings-${sent++}` } },
    );
  };
}
