import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AnswerBookEngine } from "../deploy/__fixtures__/answer-book-engine.ts";
import type { ModelVersion } from "../store/model-registry.ts";
import { FAULT_INJECTED_OUTPUT } from "./fault-injecting-engine.ts";
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
  return ((await res.json()) as { choices: { message: { content: string } }[] }).choices[0].message.content;
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
