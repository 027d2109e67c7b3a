import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { NotFoundError } from "../errors/index.ts";
import { generateToolcallTasks } from "../families/index.ts";
import { Trace } from "../trace/index.ts";
import { fail, PASS } from "../verify/index.ts";
import { DetectorRegistry } from "./detector-registry.ts";
import { solutionsByQuestion } from "./solution-resolver.ts";
import { failedVerdict } from "./verdict.ts";

const fixtures: { name: string; trace: unknown }[] = JSON.parse(
  readFileSync(new URL("../__fixtures__/detect-traces.json", import.meta.url), "utf8"),
);
const trace = (name: string) => Trace.parse(fixtures.find((f) => f.name === name)?.trace);

describe("detector registry", () => {
  it("stops reporting a failure class once its detector is disabled, and again when re-enabled", async () => {
    const registry = new DetectorRegistry();
    assert.equal((await registry.judge(trace("a correct but slow answer"))).status, "failed");
    registry.disable("latency");
    assert.equal((await registry.judge(trace("a correct but slow answer"))).status, "passed");
    assert.deepEqual(registry.getConfig().disabled, ["latency"]);
    registry.enable("latency");
    assert.equal((await registry.judge(trace("a correct but slow answer"))).status, "failed");
  });

  it("restores a tenant's settings from the JSON it saved", async () => {
    const saved = new DetectorRegistry()
      .disable("refusal")
      .configure({ latencyBudgetMs: 20_000 })
      .getConfig();
    const restored = new DetectorRegistry(JSON.parse(JSON.stringify(saved)));
    assert.equal((await restored.judge(trace("a correct but slow answer"))).status, "passed");
    assert.equal(restored.list().find((d) => d.id === "refusal")?.enabled, false);
  });

  it("judges a tenant's own env with the verifier it registered", async () => {
    const registry = new DetectorRegistry().registerVerifier("support", ({ outputs }) =>
      outputs.at(-1) === "Done!"
        ? fail({ class: "wrong_answer", path: "support.reply", message: "claims success without acting" })
        : PASS,
    );
    const judgement = await registry.judge(trace("an answer the user corrected"));
    assert.equal(judgement.primary?.class, "wrong_answer");
    assert.equal(judgement.primary?.path, "support.reply");
  });

  it("judges a trace with missing fields as unknown, naming them, instead of dropping it", async () => {
    const judgement = await new DetectorRegistry().judgeInput({
      id: "half",
      env: "toolcall",
      steps: [{ kind: "llm" }],
    });
    assert.equal(judgement.status, "unknown");
    assert.equal(judgement.traceId, "half");
    assert.match(judgement.verdicts[0].evidence.message, /startedAt: Required/);
    assert.equal((await new DetectorRegistry().judgeInput(null)).traceId, "(no id)");
  });

  it("turns a detector that throws into an unknown verdict and keeps the others' verdicts", async () => {
    const registry = new DetectorRegistry().register({
      id: "flaky",
      description: "always throws",
      detect: () => {
        throw new Error("boom");
      },
    });
    const judgement = await registry.judge(trace("a wrong argument"));
    assert.equal(judgement.status, "failed");
    assert.ok(
      judgement.verdicts.some(
        (v) => v.detectorId === "flaky" && v.status === "unknown" && /boom/.test(v.evidence.message),
      ),
    );
  });

  it("refuses to disable a detector it does not know and to register an id twice", async () => {
    const registry = new DetectorRegistry();
    assert.throws(
      () => registry.disable("vibes"),
      (e: unknown) => NotFoundError.isInstance(e),
    );
    assert.throws(
      () => registry.register({ id: "refusal", description: "", detect: () => [] }),
      /already registered/,
    );
    assert.throws(() => new DetectorRegistry({ latencyBudgetMs: -1 }), /detection config latencyBudgetMs/);
  });
});

describe("reference solutions for traces that carry none", () => {
  it("verifies gateway-recorded traffic with the tenant's solution resolver", async () => {
    const [task] = generateToolcallTasks({ split: "production", seed: 3, count: 1 });
    const bare = Trace.parse({
      id: "gw-1",
      startedAt: "2026-01-05T10:00:00Z",
      env: "toolcall",
      steps: [
        {
          id: "s0",
          kind: "llm",
          startedAt: "2026-01-05T10:00:00Z",
          llm: {
            messages: [{ role: "user", content: task.question }],
            output: { content: '{"tool":"get_weather","args":{"city":"Nowhere","unit":"c"}}' },
          },
        },
      ],
    });
    const registry = new DetectorRegistry();
    assert.equal((await registry.judge(bare)).status, "unknown");
    registry.resolveSolutionsWith(solutionsByQuestion([task]));
    assert.equal((await registry.judge(bare)).status, "failed");
  });

  it("awaits async detectors, and records one that fails or runs out of time as unknown", async () => {
    const registry = new DetectorRegistry({ detectorTimeoutMs: 50 });
    registry.register({
      id: "async_judge",
      description: "answers after a tick",
      detect: async (t) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        return [
          failedVerdict(t.id, "async_judge", { class: "wrong_answer", severity: "high", message: "judged" }),
        ];
      },
    });
    registry.register({ id: "hung", description: "never answers", detect: () => new Promise(() => {}) });
    registry.register({
      id: "down",
      description: "its service is down",
      detect: async () => {
        throw new Error("judge unreachable");
      },
    });
    const judgement = await registry.judge(trace("a correct toolcall answer in text"));
    const by = (id: string) => judgement.verdicts.find((v) => v.detectorId === id);
    assert.equal(judgement.primary?.detectorId, "async_judge");
    assert.equal(by("hung")?.status, "unknown");
    assert.match(by("hung")?.evidence.message ?? "", /did not answer within 50 ms/);
    assert.match(by("down")?.evidence.message ?? "", /detector failed: judge unreachable/);
  });
});
