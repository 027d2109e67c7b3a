import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type DetectorRegistry, solutionsByQuestion } from "@arc/core";
import { waitUntil } from "@arc/core/testing";
import OpenAI from "openai";
import { loadServerConfig } from "../../config/server-config.ts";
import { AnswerBookEngine } from "../../deploy/__fixtures__/answer-book-engine.ts";
import { toolcallEvalFixture } from "../../deploy/__fixtures__/toolcall-eval-fixture.ts";
import { toolcallVerdicts } from "../../deploy/__fixtures__/toolcall-models.ts";
import { ModelPool } from "../../gateway/model-pool.ts";
import { QUICK_RUN } from "../../orchestrator/__fixtures__/orchestrator-tenant.ts";
import { registerModelVersion } from "../../store/model-registry.ts";
import { findTenant } from "../../store/tenants.ts";
import { type RunningServer, startServer } from "../start-server.ts";

const TOOLCALL_BASE = fileURLToPath(new URL("../../../../../models/toolcall-base", import.meta.url));

/** `arc serve` holding a short improvement cycle's data, for the dashboard's browser tests. */
export interface DashboardServer {
  server: RunningServer;
  url: string;
  tenantKey: string;
  adminKey: string;
  /** The production model the cycle started from. */
  productionId: string;
  /** The candidate the run trained, now in a canary. */
  candidateId: string;
  deploymentId: string;
  /** Sends `count` chat calls through the gateway; returns the model version that answered each. */
  traffic(count: number): Promise<(string | null)[]>;
  /** `GET /v1<path>` with the tenant key. */
  api<T>(path: string): Promise<T>;
  close(): Promise<void>;
}

/** The tenant's JSON API on `url`: each call throws, naming its method, path, status and answer, unless it is 2xx. */
function tenantApi(url: string, key: string) {
  return async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${url}/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await response.json();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
    return json as T;
  };
}

/**
 * Gateway traffic: each call of the returned function sends `count` chat calls at once, the next of `questions` in
 * turn, each in a session of its own, and resolves to the model versions that answered them.
 */
function trafficSender(client: OpenAI, questions: string[]) {
  let sent = 0;
  return (count: number) =>
    Promise.all(
      Array.from({ length: count }, async () => {
        const i = sent++;
        const { response } = await client.chat.completions
          .create(
            { model: "arc", messages: [{ role: "user", content: questions[i % questions.length] }] },
            { headers: { "x-arc-session": `user-${i}`, "x-arc-env": "toolcall" } },
          )
          .withResponse();
        return response.headers.get("x-arc-model-version");
      }),
    );
}

/**
 * Starts `arc serve` (PGlite in a temp home, real HTTP, the orchestrator, validator and deployer running) and plays a
 * short cycle through it: gateway traffic fails a booking pattern, the orchestrator trains a real run (the shipped
 * tiny toolcall model, a two-step DPO recipe), validation passes the candidate and the deployer starts its canary;
 * then the candidate teaches the production model at run time, which the NDR monitor measures.
 *
 * The gateway serves answer books (TEST DOUBLES for the trained models, which cannot be trained well within a test's
 * time): the production checkpoint's folder is named `wrong-pattern` and answers the booking pattern wrongly; any
 * other checkpoint (the run's candidate) answers every question right.
 */
export async function startDashboardServer(): Promise<DashboardServer> {
  const home = mkdtempSync(join(tmpdir(), "arc-dashboard-"));
  const fx = toolcallEvalFixture("dashboard");
  const productionDir = join(home, "models", "wrong-pattern");
  cpSync(TOOLCALL_BASE, productionDir, { recursive: true });
  const questions = fx.tasks.map((t) => t.question);
  const pattern = new Set(fx.patternQuestions);
  const wrong = new AnswerBookEngine(
    new Map(questions.map((q) => [q, pattern.has(q) ? fx.wrong(q) : fx.right(q)])),
  );
  const right = new AnswerBookEngine(new Map(questions.map((q) => [q, fx.right(q)])));
  const setupRegistry = (registry: DetectorRegistry) => {
    registry.resolveSolutionsWith(solutionsByQuestion(fx.tasks));
  };
  const server = await startServer(loadServerConfig({}, { home, port: 0 }), {
    release: {
      pool: new ModelPool({ loadEngine: async (dir) => (dir === productionDir ? wrong : right) }),
      verdicts: toolcallVerdicts(fx),
      deployerIntervalMs: 50,
      validatorIntervalMs: 100,
    },
    failures: { setupRegistry },
    orchestrator: {
      enabled: true,
      minNewFailures: 12,
      cooldownMs: 600_000,
      intervalMs: 200,
      pollMs: 100,
      datasetSize: 16,
      overrides: QUICK_RUN,
    },
  });
  const credentials = server.credentials;
  if (!credentials) throw new Error("arc serve wrote no credentials");
  const tenantId = (await findTenant(server.db, credentials.tenant))?.id as string;
  const production = await registerModelVersion(server.db, tenantId, {
    name: "production",
    status: "promoted",
    artifactDir: productionDir,
    actor: "test",
  });
  const call = tenantApi(server.url, credentials.tenantKey);
  await call("PUT", "/release-settings", {
    canary: {
      minSamplesPerStage: 400,
      maxSamplesPerStage: 400,
      minControlSamples: 400,
      minDetectableIncrease: 0.3,
    },
  });
  await call("POST", "/eval-sets", fx.evalSet);
  await call("PUT", "/judges/rubric", {
    criteria: ["Calls the tool the user asked for, with every argument the question gives."],
    classes: [
      { name: "wrong_argument", description: "An argument differs from the question's.", severity: "high" },
    ],
  });

  const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: credentials.tenantKey, maxRetries: 0 });
  const traffic = trafficSender(client, [...fx.patternQuestions, ...fx.generalQuestions]);
  await traffic(40);
  const deployment = await waitUntil(
    async () =>
      (await call<{ active: { id: string; candidateId: string } | null }>("GET", "/deployments")).active,
    "the run's candidate to be validated and put in a canary",
    { timeoutMs: 120_000, intervalMs: 250 },
  );
  await traffic(40);
  // run-time teaching by the candidate, every taught call also answered by the student alone: live NDR
  await call("PUT", "/teaching", { teacher: deployment.candidateId, mode: "always", baselineShare: 1 });
  await traffic(12);
  return {
    server,
    url: server.url,
    tenantKey: credentials.tenantKey,
    adminKey: credentials.adminKey,
    productionId: production.id,
    candidateId: deployment.candidateId,
    deploymentId: deployment.id,
    traffic,
    api: (path) => call("GET", path),
    async close() {
      await server.close();
      rmSync(home, { recursive: true, force: true });
    },
  };
}
