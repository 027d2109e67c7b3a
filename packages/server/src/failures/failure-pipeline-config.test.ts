import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { DetectorRegistry, Trace } from "@arc/core";
import { failurePipelineConfigFromEnv, registrySetupFromEnv } from "./failure-pipeline-config.ts";

const dir = mkdtempSync(join(tmpdir(), "arc-detectors-module-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const sqlTrace = (answer: string) =>
  Trace.parse({
    id: `t-${answer.length}`,
    startedAt: "2026-01-05T00:00:00Z",
    env: "sql",
    input: { question: "How many orders?" },
    metadata: { solution: "select count(*) from orders" },
    steps: [
      {
        id: "s1",
        kind: "llm",
        startedAt: "2026-01-05T00:00:00Z",
        llm: { messages: [{ role: "user", content: "How many orders?" }], output: { content: answer } },
      },
    ],
  });

describe("failure pipeline settings", () => {
  it("reads the schedule from environment variables, with defaults for the rest", () => {
    const config = failurePipelineConfigFromEnv({ ARC_DETECT_QUIET_MS: "0", ARC_DETECT_WORKER: "0" });
    assert.equal(config.quietMs, 0);
    assert.equal(config.enabled, false);
    assert.equal(config.batchSize, 200);
  });

  it("names the variable of a bad setting", () => {
    assert.throws(
      () => failurePipelineConfigFromEnv({ ARC_DETECT_QUIET_MS: "soon" }),
      /quietMs \(ARC_DETECT_QUIET_MS\): Expected number/,
    );
  });

  it("runs a tenant's own verifier from the module ARC_DETECTORS_MODULE names", async () => {
    const path = join(dir, "my-detectors.mjs");
    writeFileSync(
      path,
      `export function setupRegistry(registry, tenantId) {
        registry.registerVerifier("sql", ({ outputs, solution }) =>
          outputs.at(-1) === solution
            ? { status: "pass", reward: 1 }
            : { status: "fail", reward: 0, failure: { class: "wrong_answer", message: "query for " + tenantId + " differs" } });
      }\n`,
    );
    const setup = await registrySetupFromEnv({ ARC_DETECTORS_MODULE: path });
    const registry = new DetectorRegistry();
    setup?.(registry, "acme");
    assert.equal((await registry.judge(sqlTrace("select count(*) from orders"))).status, "passed");
    const wrong = await registry.judge(sqlTrace("select * from orders"));
    assert.equal(wrong.primary?.class, "wrong_answer");
    assert.equal(wrong.primary?.evidence.message, "query for acme differs");
  });

  it("refuses a module without setupRegistry, naming the variable", async () => {
    const path = join(dir, "empty.mjs");
    writeFileSync(path, "export const nothing = 1;\n");
    await assert.rejects(
      registrySetupFromEnv({ ARC_DETECTORS_MODULE: path }),
      /ARC_DETECTORS_MODULE: expected .*setupRegistry/,
    );
    assert.equal(await registrySetupFromEnv({}), undefined);
  });
});
