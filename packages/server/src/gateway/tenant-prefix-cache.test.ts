/**
 * The gateway's in-process engine scopes its prefix cache by the scope the gateway passes (the tenant), joined with
 * the client's own `cache_salt`: a tenant's repeated system prompt reuses its cached prefix, another tenant's same
 * prompt does not, and the answers are the same either way. Runs models/toolcall-base on the embedded engine.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { EmbeddedInferenceEngine } from "@arc/engine";
import { answerJson } from "./model-answer.ts";
import { embeddedBackend, scopedCacheSalt } from "./model-backend.ts";

const MODEL = fileURLToPath(new URL("../../../../models/toolcall-base", import.meta.url));
const SYSTEM = "You answer with one tool call. ".repeat(12);

/** A greedy chat body of the shared system prompt and `question`, with the client's `cache_salt` where given. */
function body(question: string, salt?: string): Record<string, unknown> {
  return {
    model: "m",
    messages: [
      { role: "system", content: SYSTEM },
      { role: "user", content: question },
    ],
    max_tokens: 8,
    temperature: 0,
    ...(salt === undefined ? {} : { cache_salt: salt }),
  };
}

/** The answer's text, after checking it is a 200. */
async function text(
  answer: Awaited<ReturnType<ReturnType<typeof embeddedBackend>["chat"]>>,
): Promise<string> {
  const json = (await answerJson(answer)) as { choices?: { message: { content: string } }[] };
  assert.equal(answer.status, 200, JSON.stringify(json));
  return json.choices?.[0]?.message.content ?? "";
}

describe("prefix caching scoped per tenant in the gateway's in-process engine", () => {
  it("reuses a tenant's own cached prefix and never another tenant's", async () => {
    const engine = await EmbeddedInferenceEngine.load(MODEL);
    try {
      const backend = embeddedBackend(engine, "m");
      const first = await text(await backend.chat(body("Weather in Paris?"), undefined, "tenant-a"));
      assert.equal(engine.prefixCacheStats?.hits, 0);
      await text(await backend.chat(body("Weather in Oslo?"), undefined, "tenant-a"));
      assert.equal(engine.prefixCacheStats?.hits, 1, "tenant-a's second call reuses its system prompt");
      await text(await backend.chat(body("Weather in Paris?"), undefined, "tenant-b"));
      assert.equal(engine.prefixCacheStats?.hits, 1, "tenant-b reuses nothing of tenant-a's");
      await text(await backend.chat(body("Weather in Rome?", "session-1"), undefined, "tenant-a"));
      assert.equal(
        engine.prefixCacheStats?.hits,
        1,
        "a client salt within the tenant starts a scope of its own",
      );
      const cached = await text(await backend.chat(body("Weather in Paris?"), undefined, "tenant-a"));
      assert.equal(engine.prefixCacheStats?.hits, 2);
      assert.equal(cached, first, "the same prompt answers alike from the cache");
    } finally {
      await engine.close();
    }
  });

  it("joins the scope and the client's salt, and refuses an empty client salt", async () => {
    assert.equal(scopedCacheSalt(undefined, undefined), undefined);
    assert.equal(scopedCacheSalt(undefined, "s"), "s");
    assert.equal(scopedCacheSalt("t", undefined), "t");
    assert.notEqual(scopedCacheSalt("t", "s"), scopedCacheSalt("ts", ""));
    const engine = await EmbeddedInferenceEngine.load(MODEL);
    try {
      const refused = await embeddedBackend(engine, "m").chat(body("Weather?", ""));
      assert.equal(refused.status, 400);
      assert.match(JSON.stringify(await answerJson(refused)), /cache_salt/);
    } finally {
      await engine.close();
    }
  });
});
