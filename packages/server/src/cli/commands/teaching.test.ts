import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { AnswerBookEngine } from "../../deploy/__fixtures__/answer-book-engine.ts";
import { ModelPool } from "../../gateway/model-pool.ts";
import {
  type ReleaseTestServer,
  startReleaseTestServer,
} from "../../serve/__fixtures__/release-test-server.ts";
import type { Database } from "../../store/database.ts";
import { migrate } from "../../store/migrate.ts";
import { registerModelVersion } from "../../store/model-registry.ts";
import { openPgliteDatabase } from "../../store/pglite-database.ts";
import { runArcCli } from "../__fixtures__/run-arc-cli.ts";

describe("arc teaching", () => {
  let db: Database;
  let server: ReleaseTestServer;

  before(async () => {
    db = await openPgliteDatabase("memory://");
    await migrate(db);
    server = await startReleaseTestServer(db, {
      pool: new ModelPool({ loadEngine: async () => new AnswerBookEngine(new Map()) }),
    });
    await registerModelVersion(db, server.tenantId, { name: "teacher-v1", artifactDir: "/t", actor: "test" });
  });
  after(async () => {
    await server.close();
    await db.close();
  });

  it("sets a teacher for some patterns, shows each pattern's teaching, and turns teaching off", async () => {
    const set = await runArcCli(server, [
      "teaching",
      "set",
      "--teacher",
      "teacher-v1",
      "--patterns",
      "p-1,p-2",
      "--ndr-gate",
      "0.95",
    ]);
    assert.equal(set.code, 0, set.out);
    assert.match(set.out, /mode adaptive, teacher teacher-v1, patterns p-1, p-2/);
    const shown = await runArcCli(server, ["teaching", "show", "--json"]);
    const status = JSON.parse(shown.out);
    assert.deepEqual(
      status.patterns.map((p: { patternId: string; teaching: boolean }) => [p.patternId, p.teaching]),
      [
        ["p-1", true],
        ["p-2", true],
      ],
    );
    assert.equal(status.config.ndr.gate, 0.95);
    const off = await runArcCli(server, ["teaching", "off"]);
    assert.match(off.out, /teaching: off/);
  });

  it("fails with the reason when the teacher is not one of the tenant's models", async () => {
    const bad = await runArcCli(server, ["teaching", "set", "--teacher", "nobody"]);
    assert.notEqual(bad.code, 0);
    assert.match(bad.out, /no model version "nobody"/);
  });
});
