import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setImmediate as nextTurn } from "node:timers/promises";
import { AnswerBookEngine } from "../deploy/__fixtures__/answer-book-engine.ts";
import { seriesValue } from "../metrics/__fixtures__/metric-values.ts";
import { ServerMetrics } from "../metrics/metrics-registry.ts";
import type { ModelVersion } from "../store/model-registry.ts";
import { FAULT_INJECTED_OUTPUT } from "./fault-injecting-engine.ts";
import { answerBytes, answerJson } from "./model-answer.ts";
import { ModelPool } from "./model-pool.ts";

function version(tenantId: string, id: string, name: string): ModelVersion {
  const at = "2026-05-01T00:00:00.000Z";
  return {
    id,
    tenantId,
    name,
    status: "promoted",
    parentId: null,
    artifactDir: `/m/${id}`,
    upstream: null,
    lineage: {},
    metrics: {},
    createdAt: at,
    updatedAt: at,
  };
}

async function answer(pool: ModelPool, v: ModelVersion): Promise<string> {
  const res = await (await pool.backend(v)).chat({
    messages: [{ role: "user", content: "q" }],
    max_tokens: 8,
  });
  return ((await answerJson(res)) as { choices: { message: { content: string } }[] }).choices[0].message
    .content;
}

describe("ModelPool fault injection", () => {
  const loadEngine = async () => new AnswerBookEngine(new Map(), "right");

  it("injects a fault into one tenant's model only, not another tenant's model of the same name", async () => {
    const pool = new ModelPool({
      loadEngine,
      faultInjection: { "ten_a/shared": { mode: "wrong_output", rate: 1, seed: 1 } },
    });
    assert.equal(await answer(pool, version("ten_a", "mv_a1", "shared")), FAULT_INJECTED_OUTPUT);
    assert.equal(await answer(pool, version("ten_b", "mv_b1", "shared")), "right");
  });

  it("injects a fault by model version id", async () => {
    const pool = new ModelPool({
      loadEngine,
      faultInjection: { mv_b2: { mode: "wrong_output", rate: 1, seed: 1 } },
    });
    assert.equal(await answer(pool, version("ten_b", "mv_b2", "x")), FAULT_INJECTED_OUTPUT);
    assert.equal(await answer(pool, version("ten_a", "mv_a2", "x")), "right");
  });

  it("refuses an ARC_GATEWAY_FAULT_INJECTION key that is a bare model name, naming the expected forms", () => {
    assert.throws(
      () => ModelPool.fromEnv({ ARC_GATEWAY_FAULT_INJECTION: '{"shared": {"mode": "wrong_output"}}' }),
      /expected a key "mv_\.\.\." \(a model version id\) or "<tenantId>\/<model name>", got "shared"/,
    );
    assert.ok(
      ModelPool.fromEnv({ ARC_GATEWAY_FAULT_INJECTION: '{"ten_a/run_1/step-2": {"mode": "error"}}' }),
    );
  });
});

describe("ModelPool bound", () => {
  /** An engine per load, each counting its closes under its checkpoint folder. */
  function countingLoader() {
    const loads: string[] = [];
    const closes: string[] = [];
    const loadEngine = async (dir: string) => {
      loads.push(dir);
      const engine = new AnswerBookEngine(new Map(), dir);
      return Object.assign(engine, { close: async () => void closes.push(dir) });
    };
    return { loads, closes, loadEngine };
  }

  it("holds at most maxLoaded checkpoints, closing the least recently used once its calls end", async () => {
    const { loads, closes, loadEngine } = countingLoader();
    const metrics = new ServerMetrics().modelPool;
    const pool = new ModelPool({ loadEngine, maxLoaded: 2, metrics });
    const [v1, v2, v3] = ["mv_01", "mv_02", "mv_03"].map((id) => version("ten_a", id, id));
    assert.equal(await answer(pool, v1), "/m/mv_01");
    await answer(pool, v2);
    // a call on v1 whose streamed answer is not read yet holds v1's engine
    const unread = await (await pool.backend(v1)).chat({
      messages: [{ role: "user", content: "q" }],
      stream: true,
    });
    await answer(pool, v2);
    await answer(pool, v3); // v1 is now the least recently used: let go of, but its call has not ended
    await nextTurn();
    assert.deepEqual(closes, [], "an engine with a call in flight stays open");
    assert.match(Buffer.from(await answerBytes(unread)).toString(), /data: \[DONE\]/);
    await nextTurn();
    assert.deepEqual(closes, ["/m/mv_01"], "closed as its last call ends");
    assert.equal(await answer(pool, v1), "/m/mv_01", "a call after that loads it again");
    await nextTurn();
    assert.deepEqual(closes, ["/m/mv_01", "/m/mv_02"]);
    assert.deepEqual(loads, ["/m/mv_01", "/m/mv_02", "/m/mv_03", "/m/mv_01"]);
    assert.deepEqual(pool.stats(), { loaded: 2, maxLoaded: 2, evictions: 2 });
    assert.equal(await seriesValue(metrics.loaded), 2);
    assert.equal(await seriesValue(metrics.evictions), 2);
  });

  it("closes a retired version after the drain, and again after a late call through its old handle", async () => {
    const { loads, closes, loadEngine } = countingLoader();
    const pool = new ModelPool({ loadEngine, retireDrainMs: 0 });
    const v1 = version("ten_a", "mv_11", "old");
    const handle = await pool.backend(v1);
    pool.retire(v1);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await nextTurn();
    assert.deepEqual(closes, ["/m/mv_11"]);
    assert.equal(pool.stats().loaded, 0);
    const late = await handle.chat({ messages: [{ role: "user", content: "q" }] });
    await answerBytes(late);
    await nextTurn();
    assert.deepEqual(loads, ["/m/mv_11", "/m/mv_11"]);
    assert.deepEqual(closes, ["/m/mv_11", "/m/mv_11"], "retired: closed again after its late call");
    assert.equal(pool.stats().loaded, 0, "a retired version does not count against the bound");
    const looked = await pool.backend(v1); // a request that chose v1 before it left service
    await answerBytes(await looked.chat({ messages: [{ role: "user", content: "q" }] }));
    await nextTurn();
    assert.equal(closes.length, 3, "looked up again after its retirement, it is still closed after its call");
  });
});
