import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { waitUntil } from "@arc/core/testing";
import OpenAI from "openai";
import { toolcallEvalFixture } from "./__fixtures__/toolcall-eval-fixture.ts";

const script = join(import.meta.dirname, "../serve/__fixtures__/serve-toolcall-release.ts");
const fx = toolcallEvalFixture("fixture");
const traffic = [...fx.generalQuestions, ...fx.patternQuestions];

/** What `GET /v1/deployments` answers, as far as this test reads it. */
type Deployments = { active: { id: string; status: string; stage: number; share: number } | null };

interface Child {
  process: ChildProcess;
  url: string;
  key: string;
}

/** The answer-book models' checkpoint folders (ARC_MODELS_DIR): the test doubles read only their names. */
async function answerBookModels(home: string): Promise<string> {
  const dir = join(home, "models");
  for (const name of ["wrong-pattern", "right"]) {
    await mkdir(join(dir, name), { recursive: true });
    await writeFile(join(dir, name, "config.json"), "{}");
  }
  return dir;
}

function startChild(home: string): Promise<Child> {
  const child = spawn(process.execPath, ["--import", "tsx", script], {
    env: { ...process.env, ARC_HOME: home, ARC_PORT: "0", ARC_MODELS_DIR: join(home, "models") },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    child.stderr?.on("data", (d) => {
      err += d;
    });
    child.stdout?.on("data", (d) => {
      out += d;
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line) resolve({ process: child, ...(JSON.parse(line) as { url: string; key: string }) });
    });
    child.once("exit", (code) => reject(new Error(`server exited with ${code}: ${out}${err}`)));
  });
}

async function api<T = unknown>(c: Child, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${c.url}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${c.key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json as T;
}

async function ask(c: Child, session: string, i: number): Promise<string | null> {
  const client = new OpenAI({ baseURL: `${c.url}/v1`, apiKey: c.key, maxRetries: 0 });
  const { response } = await client.chat.completions
    .create(
      { model: "arc", messages: [{ role: "user", content: traffic[i % traffic.length] }] },
      { headers: { "x-arc-session": session, "x-arc-env": "toolcall" } },
    )
    .withResponse();
  return response.headers.get("x-arc-model-version");
}

describe("deployment state across a crash", () => {
  const homes: string[] = [];
  after(async () => {
    for (const h of homes) await rm(h, { recursive: true, force: true });
  });

  it("resumes the same canary at the same stage, share and sticky routing after the server is killed with SIGKILL mid-canary", async () => {
    const home = await mkdtemp(join(tmpdir(), "arc-restart-"));
    homes.push(home);
    const models = await answerBookModels(home);
    let server = await startChild(home);
    try {
      await api(server, "PUT", "/release-settings", {
        canary: { minSamplesPerStage: 25, minControlSamples: 10, minDetectableIncrease: 0.3 },
      });
      await api(server, "POST", "/eval-sets", fx.evalSet);
      await api(server, "POST", "/model-versions", {
        name: "production",
        status: "promoted",
        artifactDir: join(models, "wrong-pattern"),
      });
      const candidate = await api<{ id: string }>(server, "POST", "/model-versions", {
        name: "fixed",
        artifactDir: join(models, "right"),
      });
      await waitUntil(
        async () => (await api<Deployments>(server, "GET", "/deployments")).active,
        "the validator and deployer to start a canary",
        { timeoutMs: 30_000 },
      );

      let i = 0;
      const atStage1 = await waitUntil(
        async () => {
          await Promise.all(Array.from({ length: 8 }, () => ask(server, `load-${i}`, i++)));
          const { active } = await api<Deployments>(server, "GET", "/deployments");
          return active?.stage === 1 ? active : null;
        },
        "the canary to reach 50%",
        { timeoutMs: 30_000 },
      );
      const sessions = Array.from({ length: 12 }, (_, k) => `probe-${k}`);
      const before = await Promise.all(sessions.map((s, k) => ask(server, s, k)));
      assert.ok(
        before.includes(candidate.id) && before.some((v) => v !== candidate.id),
        "probes should hit both arms",
      );

      server.process.kill("SIGKILL");
      await new Promise((r) => server.process.once("exit", r));
      server = await startChild(home);

      const { active } = await api<Deployments>(server, "GET", "/deployments");
      assert.ok(active);
      assert.equal(active.id, atStage1.id);
      assert.equal(active.status, "canary");
      assert.equal(active.stage, 1);
      assert.equal(active.share, 0.5);
      assert.deepEqual(await Promise.all(sessions.map((s, k) => ask(server, s, k))), before);

      await waitUntil(
        async () => {
          await Promise.all(Array.from({ length: 8 }, () => ask(server, `load-${i}`, i++)));
          return (
            (await api<{ model: { status: string } }>(server, "GET", `/model-versions/${candidate.id}`)).model
              .status === "promoted"
          );
        },
        "the resumed canary to be promoted",
        { timeoutMs: 30_000 },
      );
      const { audit } = await api<{ audit: { action: string }[] }>(
        server,
        "GET",
        `/deployments/${atStage1.id}`,
      );
      assert.deepEqual(
        audit.map((a) => a.action),
        ["start_canary", "advance", "promote"],
      );
    } finally {
      if (server.process.exitCode === null && server.process.signalCode === null) {
        const exited = new Promise((r) => server.process.once("exit", r));
        server.process.kill("SIGTERM");
        await exited;
      }
    }
  });
});
