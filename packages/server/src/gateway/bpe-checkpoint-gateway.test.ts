/**
 * The gateway serving a checkpoint with a real BPE tokenizer (models/toolcall-bpe, a Qwen2 with its own Jinja chat
 * template) from the embedded engine: the official openai client's chat messages with tools come back as tool calls
 * and are recorded as traces, and a prompt is held to the model's context in its tokens, not its bytes.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { toOpenAiTools } from "@arc/core";
import { TOOLCALL_TOOLS } from "@arc/core/families";
import OpenAI from "openai";
import { type ReleaseTestServer, startReleaseTestServer } from "../serve/__fixtures__/release-test-server.ts";
import type { Database } from "../store/database.ts";
import { migrate } from "../store/migrate.ts";
import { registerModelVersion } from "../store/model-registry.ts";
import { openPgliteDatabase } from "../store/pglite-database.ts";
import { getTrace, listTraces } from "../store/trace-store.ts";

const BPE_MODEL = fileURLToPath(new URL("../../../../models/toolcall-bpe", import.meta.url));
const tools = toOpenAiTools(TOOLCALL_TOOLS) as unknown as OpenAI.ChatCompletionTool[];

describe("the gateway on a BPE checkpoint (models/toolcall-bpe)", () => {
  let db: Database;
  let server: ReleaseTestServer;
  let client: OpenAI;

  before(async () => {
    db = await openPgliteDatabase("memory://");
    await migrate(db);
    server = await startReleaseTestServer(db, { startWorkers: false });
    await registerModelVersion(db, server.tenantId, {
      name: "toolcall-bpe",
      status: "promoted",
      artifactDir: BPE_MODEL,
      actor: "test",
    });
    client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: server.key, maxRetries: 0 });
  });

  after(async () => {
    await server?.close();
    await db?.close();
  });

  it("answers a request with tools as a tool call and records it with the tools offered", async () => {
    const reply = await client.chat.completions.create({
      model: "arc",
      messages: [{ role: "user", content: "Book a table for 4 at Sakura House on 2026-03-05." }],
      tools,
      temperature: 0,
      user: "bpe-user",
    });
    const call = reply.choices[0].message.tool_calls?.[0];
    assert.equal(reply.choices[0].finish_reason, "tool_calls");
    assert.equal(call?.type === "function" ? call.function.name : undefined, "book_table");
    assert.match(call?.type === "function" ? call.function.arguments : "", /"Sakura House"/);
    await server.release.gateway.flush();
    const [summary] = (await listTraces(db, server.tenantId, { text: "Sakura House" })).data;
    const trace = await getTrace(db, server.tenantId, summary.id);
    const llm = trace.steps[0].llm;
    assert.equal(llm?.modelServed, "toolcall-bpe");
    assert.deepEqual(
      llm?.tools?.map((t) => (t as { function: { name: string } }).function.name),
      tools.map((t) => (t.type === "function" ? t.function.name : "")),
    );
    assert.equal(llm?.output?.toolCalls?.[0]?.function.name, "book_table");
  });

  it("takes a prompt longer in bytes than the context that fits it in tokens", async () => {
    const long = "Please book a table for two at a quiet restaurant near the station tonight. ".repeat(16);
    assert.ok(Buffer.byteLength(long) > 1024, "more bytes than the model's 1,024-token context");
    const reply = await client.chat.completions.create({
      model: "arc",
      messages: [{ role: "user", content: long }],
      temperature: 0,
      max_tokens: 8,
    });
    assert.ok((reply.usage?.prompt_tokens ?? 0) < 1024, `prompt of ${reply.usage?.prompt_tokens} tokens`);
    assert.equal(reply.usage?.completion_tokens, 8);
  });

  it("refuses a prompt that cannot fit as OpenAI does, context_length_exceeded", async () => {
    await assert.rejects(
      client.chat.completions.create({
        model: "arc",
        messages: [{ role: "user", content: "book ".repeat(20_000) }],
        max_tokens: 8,
      }),
      (error: unknown) => {
        const e = error as { status: number; code: string; message: string };
        assert.equal(e.status, 400);
        assert.equal(e.code, "context_length_exceeded");
        assert.match(e.message, /maximum context length is 1024 tokens/);
        return true;
      },
    );
  });
});
