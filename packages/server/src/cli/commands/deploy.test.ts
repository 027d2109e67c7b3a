import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { toolcallEvalFixture } from "../../deploy/__fixtures__/toolcall-eval-fixture.ts";
import { toolcallModelPool, toolcallVerdicts } from "../../deploy/__fixtures__/toolcall-models.ts";
import { setReleaseSettings } from "../../deploy/release-settings.ts";
import {
  type ReleaseTestServer,
  startReleaseTestServer,
} from "../../serve/__fixtures__/release-test-server.ts";
import type { Database } from "../../store/database.ts";
import { migrate } from "../../store/migrate.ts";
import { getModelVersion, registerModelVersion } from "../../store/model-registry.ts";
import { openPgliteDatabase } from "../../store/pglite-database.ts";
import { runArcCli } from "../__fixtures__/run-arc-cli.ts";

describe("arc models / arc deploy", () => {
  let db: Database;
  let server: ReleaseTestServer;
  const fx = toolcallEvalFixture("cli");

  before(async () => {
    db = await openPgliteDatabase("memory://");
    await migrate(db);
    server = await startReleaseTestServer(db, {
      pool: toolcallModelPool(fx),
      verdicts: toolcallVerdicts(fx),
    });
    await setReleaseSettings(db, server.tenantId, { canary: { autoStart: false } });
    await server.release.evalSets.put(server.tenantId, fx.evalSet);
    await registerModelVersion(db, server.tenantId, {
      name: "prod",
      status: "promoted",
      artifactDir: "/m/wrong-pattern",
      actor: "test",
    });
    await registerModelVersion(db, server.tenantId, { name: "cand", artifactDir: "/m/right", actor: "test" });
  });

  after(async () => {
    await server.close();
    await db.close();
  });

  it("validates a candidate and shows its per-slice report and audit trail", async () => {
    const validated = await runArcCli(server, ["models", "validate", "cand"]);
    assert.equal(validated.code, 0);
    assert.match(validated.out, /model cand is now validated/);
    assert.match(validated.out, /pat-booking\s+20\s+verifier:toolcall\s+100\.0%\s+0\.0%/);
    const ls = await runArcCli(server, ["models", "ls"]);
    assert.match(ls.out, /cand\s+mv_\w+\s+validated/);
    const show = await runArcCli(server, ["models", "show", "cand"]);
    assert.match(show.out, /user:\S+\s+validate\s+candidate -> validated/);
  });

  it("starts, shows and rolls back a canary, and refuses to promote it afterwards", async () => {
    assert.equal((await runArcCli(server, ["deploy", "start", "cand"])).code, 0);
    const status = await runArcCli(server, ["deploy", "status"]);
    assert.match(status.out, /canary dep_\w+: mv_\w+ at 10% \(stage 1 of 3\)/);
    const rolled = await runArcCli(server, ["deploy", "rollback", "--reason", "drill"]);
    assert.match(rolled.out, /is now rolled_back/);
    assert.equal((await getModelVersion(db, server.tenantId, "cand")).status, "rolled_back");
    const depId = /deployment (dep_\w+)/.exec(rolled.out)?.[1] as string;
    const promote = await runArcCli(server, ["deploy", "promote", depId]);
    assert.equal(promote.code, 2);
    assert.match(promote.out, /only a running canary can be promoted/);
  });

  it("names the missing argument when a model is not given", async () => {
    const r = await runArcCli(server, ["models", "approve"]);
    assert.equal(r.code, 2);
    assert.match(r.out, /usage: arc models approve <id\|name>/);
  });
});
