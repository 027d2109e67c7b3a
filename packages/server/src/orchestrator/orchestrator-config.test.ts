import assert from "node:assert/strict";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Database } from "../store/database.ts";
import { openPgliteDatabase } from "../store/pglite-database.ts";
import { orchestratorConfigFromEnv } from "./orchestrator-config.ts";
import { createRunService } from "./run-service.ts";

describe("orchestrator settings", () => {
  it("refuses a malformed override at start, naming it and the variable", () => {
    const config = orchestratorConfigFromEnv({
      ARC_ORCHESTRATOR_OVERRIDES: " trainer.steps=20  data.evalCount=32 ",
    });
    assert.deepEqual(config.overrides, ["trainer.steps=20", "data.evalCount=32"]);
    for (const [override, problem] of [
      ["trainer.steps", /override: expected key=value/],
      ["trainer..steps=3", /trainer\.\.steps: empty key part/],
      ["=3", /override: expected key=value/],
      ["__proto__.polluted=1", /"__proto__" is never a recipe key/],
    ] as const) {
      assert.throws(
        () => orchestratorConfigFromEnv({ ARC_ORCHESTRATOR_OVERRIDES: `trainer.seed=2 ${override}` }),
        (error: unknown) => {
          const message = (error as Error).message;
          assert.ok(message.startsWith(`ARC_ORCHESTRATOR_OVERRIDES: ${JSON.stringify(override)}: `), message);
          assert.match(message, problem);
          return true;
        },
        override,
      );
    }
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.throws(
      () => orchestratorConfigFromEnv({}, { overrides: ["trainer.steps"] }),
      /^Error: orchestrator overrides: "trainer\.steps": override: expected key=value/,
    );
  });
});

describe("the run service at start", () => {
  let db: Database;
  let home: string;
  before(async () => {
    db = await openPgliteDatabase("memory://");
    home = await mkdtemp(join(tmpdir(), "arc-run-service-"));
  });
  after(() => db?.close());

  const start = (env: NodeJS.ProcessEnv) => createRunService({ db, home, env });

  it("stops when the orchestrator is on and its recipe does not take its overrides, naming the key", async () => {
    const on = await start({ ARC_ORCHESTRATOR: "1", ARC_ORCHESTRATOR_OVERRIDES: "trainer.steps=20" });
    assert.deepEqual(on.orchestrator.config.overrides, ["trainer.steps=20"]);
    await on.close();
    const off = await start({ ARC_ORCHESTRATOR_OVERRIDES: "trainer.stpes=3" });
    assert.equal(
      off.orchestrator.config.enabled,
      false,
      "an orchestrator that is off never reads its recipe",
    );
    await off.close();
    await assert.rejects(
      start({ ARC_ORCHESTRATOR: "1", ARC_ORCHESTRATOR_OVERRIDES: "trainer.stpes=3" }),
      /^Error: orchestrator recipe \(ARC_ORCHESTRATOR_RECIPE, ARC_ORCHESTRATOR_OVERRIDES\): recipes\/toolcall-dpo\.yaml: trainer: unknown key\(s\) stpes/,
    );
    await assert.rejects(
      start({ ARC_ORCHESTRATOR: "1", ARC_ORCHESTRATOR_OVERRIDES: "trainer.steps=many" }),
      /recipes\/toolcall-dpo\.yaml: trainer\.steps: expected number, got string/,
    );
    await assert.rejects(
      start({ ARC_ORCHESTRATOR: "1", ARC_ORCHESTRATOR_RECIPE: "recipes/nope.yaml" }),
      /recipe: expected a recipe file, "recipes\/nope\.yaml" does not exist in the repository/,
    );
  });
});
