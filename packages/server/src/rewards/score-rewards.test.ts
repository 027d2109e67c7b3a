import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { InvalidInputError } from "@arc/core";
import type { Database } from "../store/database.ts";
import { createTenant } from "../store/tenants.ts";
import { databasesUnderTest } from "../store/test-databases.ts";
import { scoreRewards } from "./score-rewards.ts";

const item = (solution: unknown) => ({
  env: "toolcall",
  question: "Weather in Oslo in celsius?",
  answer: '{"tool":"get_weather","args":{"city":"Oslo","unit":"c"}}',
  solution,
});

for (const target of databasesUnderTest()) {
  describe(`rewards of rows whose solution a verifier cannot read (${target.name})`, {
    skip: target.skip,
  }, () => {
    let db: Database;
    let tenantId: string;
    before(async () => {
      db = await target.open();
      tenantId = (await createTenant(db, "acme")).id;
    });
    after(() => db?.close());

    it("refuses a toolcall solution without its args with 400 naming the row's solution", async () => {
      await assert.rejects(
        scoreRewards(db, tenantId, {}, { kind: "partial", items: [item({ tool: "get_weather" })] }),
        (error: unknown) => {
          assert.ok(error instanceof InvalidInputError, String(error));
          assert.equal(error.statusCode, 400);
          assert.equal(error.field, "items.0.solution");
          assert.match(error.message, /^items\[0\]\.solution: the toolcall family's verifier cannot read it/);
          return true;
        },
      );
    });

    it("still scores a row whose solution is a whole call", async () => {
      const [answer] = await scoreRewards(
        db,
        tenantId,
        {},
        {
          kind: "partial",
          items: [item({ tool: "get_weather", args: { city: "Oslo", unit: "c" } })],
        },
      );
      assert.deepEqual(answer, { score: 1, passed: true, judgedBy: "verifier:toolcall" });
    });
  });
}
