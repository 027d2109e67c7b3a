import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { failedVerdict, type Trace } from "@arc/core";
import { upsertVerdicts } from "../failures/verdict-store.ts";
import type { Database } from "../store/database.ts";
import { createTenant } from "../store/tenants.ts";
import { databasesUnderTest } from "../store/test-databases.ts";
import { insertTraces } from "../store/trace-store.ts";
import { type LiveVerdict, StoredVerdicts, type VerdictSource } from "./verdict-source.ts";

function trace(id: string, endedMsAgo: number): Trace {
  const at = new Date(Date.now() - endedMsAgo).toISOString();
  return { id, startedAt: at, endedAt: at, status: "ok", steps: [] };
}

/** A fallback that says "passed" for every trace it is asked about, and remembers which. */
class RecordingFallback implements VerdictSource {
  asked: string[] = [];
  async judge(_tenantId: string, traces: Trace[]): Promise<LiveVerdict[]> {
    this.asked.push(...traces.map((t) => t.id));
    return traces.map(() => ({ status: "passed" }));
  }
}

for (const dbUnderTest of databasesUnderTest()) {
  describe(`StoredVerdicts (${dbUnderTest.name})`, { skip: dbUnderTest.skip }, () => {
    let db: Database;
    before(async () => {
      db = await dbUnderTest.open();
    });
    after(async () => {
      await db.close();
    });

    it("uses the failure pipeline's verdict when stored, waits for a fresh trace, and judges a late one inline", async () => {
      const tenant = await createTenant(db, "verdicts");
      const traces = [trace("judged", 100), trace("fresh", 100), trace("late", 60_000)];
      await insertTraces(db, tenant.id, traces);
      await upsertVerdicts(db, tenant.id, [
        {
          traceId: "judged",
          patternId: null,
          modelVersion: null,
          judgement: {
            traceId: "judged",
            status: "failed",
            primary: failedVerdict("judged", "verifier", {
              class: "wrong_tool",
              severity: "high",
              message: "called add_event",
            }),
            verdicts: [],
          },
        },
      ]);
      const fallback = new RecordingFallback();
      const got = await new StoredVerdicts(db, fallback, 5_000).judge(tenant.id, traces);
      assert.deepEqual(got, [{ status: "failed", failureClass: "wrong_tool" }, null, { status: "passed" }]);
      assert.deepEqual(fallback.asked, ["late"]);
    });
  });
}
