import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { waitUntil } from "@arc/core/testing";
import {
  configForSize,
  EmbeddedInferenceEngine,
  initWeights,
  startEngineServer,
  writeHfCheckpoint,
} from "@arc/engine";
import OpenAI from "openai";
import { AnswerBookEngine } from "../deploy/__fixtures__/answer-book-engine.ts";
import { startCanary } from "../deploy/deployment-store.ts";
import { type ReleaseTestServer, startReleaseTestServer } from "../serve/__fixtures__/release-test-server.ts";
import type { Database } from "../store/database.ts";
import { registerModelVersion } from "../store/model-registry.ts";
import { databasesUnderTest } from "../store/test-databases.ts";
import { getTrace, listTraces } from "../store/trace-store.ts";
import { answerBytes } from "./model-answer.ts";
import { ModelPool } from "./model-pool.ts";

for (const dbUnderTest of databasesUnderTest()) {
  describe(`gateway (${dbUnderTest.name})`, { skip: dbUnderTest.skip }, () => {
    let db: Database;
    let dir: string;
    let server: ReleaseTestServer;

    before(async () => {
      db = await dbUnderTest.open();
      dir = await mkdtemp(join(tmpdir(), "arc-gateway-"));
      const config = configForSize("tiny");
      await writeHfCheckpoint(join(dir, "base"), config, initWeights(config, 1));
      const books: Record<string, AnswerBookEngine> = {
        [join(dir, "a")]: new AnswerBookEngine(new Map(), "answer from a"),
        [join(dir, "b")]: new AnswerBookEngine(new Map(), "answer from b"),
      };
      server = await startReleaseTestServer(db, {
        pool: new ModelPool({
          loadEngine: async (artifactDir) => books[artifactDir] ?? EmbeddedInferenceEngine.load(artifactDir),
        }),
      });
    });

    after(async () => {
      await server.close();
      await db.close();
      await rm(dir, { recursive: true, force: true });
    });

    it("answers 404 in OpenAI's error shape while the tenant has no deployed model", async () => {
      const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: server.key, maxRetries: 0 });
      await assert.rejects(
        client.chat.completions.create({ model: "arc", messages: [{ role: "user", content: "hi" }] }),
        (error: unknown) => {
          const e = error as { status: number; code: string; message: string };
          assert.equal(e.status, 404);
          assert.equal(e.code, "model_not_found");
          assert.match(e.message, /no deployed model/);
          return true;
        },
      );
    });

    it("serves the official openai client, non-stream and stream, from the promoted embedded checkpoint and records both calls with the model version", async () => {
      const base = await registerModelVersion(db, server.tenantId, {
        name: "tiny-base",
        status: "promoted",
        artifactDir: join(dir, "base"),
        actor: "test",
      });
      const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: server.key, maxRetries: 0 });
      const models = await client.models.list();
      assert.deepEqual(
        models.data.map((m) => m.id),
        ["arc", "tiny-base"],
      );
      const done = await client.chat.completions.create({
        model: "arc",
        messages: [{ role: "user", content: "What is the weather in Oslo?" }],
        max_tokens: 6,
        temperature: 0,
        user: "u-1",
      });
      assert.equal(done.object, "chat.completion");
      assert.equal(typeof done.choices[0].message.content, "string");
      assert.equal(done.usage?.completion_tokens, 6);

      const stream = await client.chat.completions.create({
        model: "arc",
        messages: [{ role: "user", content: "Book a table" }],
        max_tokens: 5,
        temperature: 0,
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = "";
      let usage: number | undefined;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta?.content ?? "";
        if (chunk.usage) usage = chunk.usage.completion_tokens;
      }
      assert.equal(usage, 5);

      const page = await waitUntil(async () => {
        const p = await listTraces(db, server.tenantId, { model: "tiny-base" });
        return p.data.length === 2 ? p : undefined;
      }, "two gateway traces");
      const traces = await Promise.all(page.data.map((t) => getTrace(db, server.tenantId, t.id)));
      const streamed = traces.find((t) => t.input === "Book a table");
      const plain = traces.find((t) => t.input === "What is the weather in Oslo?");
      assert.ok(streamed && plain);
      assert.equal(streamed.steps[0].llm?.modelVersion, base.id);
      assert.equal(streamed.steps[0].llm?.output?.content, text);
      assert.equal(streamed.steps[0].llm?.usage?.completionTokens, 5);
      assert.equal(plain.userId, "u-1");
      assert.equal(plain.steps[0].llm?.output?.content, done.choices[0].message.content);
      assert.equal(plain.status, "ok");
    });

    it("records a call after its answer is handed back, and flush stores it", async () => {
      const { gateway } = server.release;
      const answer = await gateway.chat(server.tenantId, {
        model: "arc",
        messages: [{ role: "user", content: "Recorded after the answer" }],
        max_tokens: 3,
      });
      assert.equal(answer.status, 200);
      await answerBytes(answer);
      await gateway.flush();
      const page = await listTraces(db, server.tenantId, { text: "Recorded after the answer" });
      assert.equal(page.data.length, 1);
      assert.equal(page.data[0].status, "ok");
    });

    it("forwards an upstream's error status and OpenAI error body untouched, and records the failed call", async () => {
      const upstreamServer = await startEngineServer(new AnswerBookEngine(new Map()), {
        modelId: "served-name",
      });
      try {
        const other = await startReleaseTestServer(db, { pool: new ModelPool() });
        try {
          await registerModelVersion(db, other.tenantId, {
            name: "remote",
            status: "promoted",
            upstream: { baseUrl: upstreamServer.baseURL, model: "not-the-served-name" },
            actor: "test",
          });
          const direct = await fetch(`${upstreamServer.baseURL}/chat/completions`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({
              model: "not-the-served-name",
              messages: [{ role: "user", content: "x" }],
            }),
          });
          const res = await fetch(`${other.url}/v1/chat/completions`, {
            method: "POST",
            headers: { authorization: `Bearer ${other.key}`, "content-type": "application/json" },
            body: JSON.stringify({ model: "arc", messages: [{ role: "user", content: "x" }] }),
          });
          assert.equal(res.status, direct.status);
          assert.equal(res.status, 404);
          assert.deepEqual(await res.json(), await direct.json());
          const page = await waitUntil(async () => {
            const p = await listTraces(db, other.tenantId, { status: "error" });
            return p.data.length === 1 ? p : undefined;
          }, "the failed call's trace");
          const trace = await getTrace(db, other.tenantId, page.data[0].id);
          assert.equal(trace.steps[0].error?.status, 404);
          assert.match(trace.steps[0].error?.message ?? "", /does not exist/);
        } finally {
          await other.close();
        }
      } finally {
        await upstreamServer.close();
      }
    });

    it("answers 502 with an OpenAI error body when the upstream cannot be reached, and records the call", async () => {
      const other = await startReleaseTestServer(db, { pool: new ModelPool() });
      try {
        await registerModelVersion(db, other.tenantId, {
          name: "down",
          status: "promoted",
          upstream: { baseUrl: "http://127.0.0.1:1/v1", model: "m" },
          actor: "test",
        });
        const client = new OpenAI({ baseURL: `${other.url}/v1`, apiKey: other.key, maxRetries: 0 });
        await assert.rejects(
          client.chat.completions.create({ model: "arc", messages: [{ role: "user", content: "x" }] }),
          (error: unknown) => {
            const e = error as { status: number; code: string; message: string };
            assert.equal(e.status, 502);
            assert.equal(e.code, "model_unavailable");
            assert.match(e.message, /model down is unavailable: .*ECONNREFUSED/);
            return true;
          },
        );
        await waitUntil(async () => {
          const p = await listTraces(db, other.tenantId, { status: "error" });
          return p.data.length === 1 ? p : undefined;
        }, "the failed call's trace");
      } finally {
        await other.close();
      }
    });

    it("keeps each conversation on one arm of a canary and sends about the canary's share of conversations to it", async () => {
      const tenant = await startReleaseTestServer(db, { pool: server.release.pool });
      try {
        await registerModelVersion(db, tenant.tenantId, {
          name: "a",
          status: "promoted",
          artifactDir: join(dir, "a"),
          actor: "test",
        });
        await registerModelVersion(db, tenant.tenantId, {
          name: "b",
          status: "validated",
          artifactDir: join(dir, "b"),
          actor: "test",
        });
        await startCanary(db, tenant.tenantId, { candidate: "b", actor: "test", policy: { ramp: [0.3, 1] } });
        const client = new OpenAI({ baseURL: `${tenant.url}/v1`, apiKey: tenant.key, maxRetries: 0 });
        const seen = new Map<string, Set<string>>();
        for (let round = 0; round < 2; round++) {
          await Promise.all(
            Array.from({ length: 60 }, async (_, i) => {
              const session = `conv-${i}`;
              const r = await client.chat.completions.create(
                { model: "arc", messages: [{ role: "user", content: `turn ${round}` }] },
                { headers: { "x-arc-session": session } },
              );
              const answers = seen.get(session) ?? new Set();
              answers.add(r.choices[0].message.content ?? "");
              seen.set(session, answers);
            }),
          );
        }
        assert.ok(
          [...seen.values()].every((s) => s.size === 1),
          "a conversation switched models",
        );
        const onCanary = [...seen.values()].filter((s) => s.has("answer from b")).length;
        assert.ok(onCanary >= 8 && onCanary <= 30, `${onCanary} of 60 conversations on a 30% canary`);
      } finally {
        await tenant.close();
      }
    });
  });
}
