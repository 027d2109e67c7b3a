import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  type ReleaseTestServer,
  startReleaseTestServer,
} from "../../serve/__fixtures__/release-test-server.ts";
import type { Database } from "../../store/database.ts";
import { getModelVersion, listModelVersions, type ModelVersion } from "../../store/model-registry.ts";
import { databasesUnderTest } from "../../store/test-databases.ts";
import { runArcCli } from "../__fixtures__/run-arc-cli.ts";

for (const target of databasesUnderTest()) {
  describe(`arc models register on ${target.name}`, { skip: target.skip }, () => {
    let db: Database;
    let home: string;
    let server: ReleaseTestServer;

    before(async () => {
      db = await target.open();
      home = await mkdtemp(join(tmpdir(), "arc-models-cli-"));
      server = await startReleaseTestServer(db, {
        registration: {
          home,
          upstreams: { vllm: { baseUrl: "http://127.0.0.1:9/v1", apiKeyEnv: "VLLM_KEY" } },
        },
      });
      for (const folder of ["run_0/base", "run_1/step-10"]) {
        const checkpoint = join(home, "artifacts", server.tenantId, folder);
        await mkdir(checkpoint, { recursive: true });
        await writeFile(join(checkpoint, "config.json"), "{}");
      }
    });
    after(async () => {
      await server?.close();
      await db?.close();
      await rm(home, { recursive: true, force: true });
    });

    it("registers a checkpoint as the first, promoted model and prints its new id", async () => {
      const done = await runArcCli(server, [
        "models",
        "register",
        "--name",
        "base",
        "--artifact-dir",
        "run_0/base",
        "--status",
        "promoted",
      ]);
      assert.equal(done.code, 0, done.out);
      const id = /^model base registered as (mv_[0-9a-f]+) \(promoted\)$/.exec(done.out)?.[1];
      assert.ok(id, done.out);
      const stored = await getModelVersion(db, server.tenantId, id);
      assert.equal(stored.status, "promoted");
      assert.equal(stored.artifactDir, join(home, "artifacts", server.tenantId, "run_0", "base"));
    });

    it("registers an allowlisted upstream model as a candidate of a parent named by name, as JSON", async () => {
      const done = await runArcCli(server, [
        "models",
        "register",
        "--name",
        "hosted",
        "--upstream",
        "vllm",
        "--upstream-model",
        "served-model",
        "--parent",
        "base",
        "--json",
      ]);
      assert.equal(done.code, 0, done.out);
      const model = JSON.parse(done.out) as ModelVersion;
      assert.equal(model.status, "candidate");
      assert.equal(model.parentId, (await getModelVersion(db, server.tenantId, "base")).id);
      assert.deepEqual(model.upstream, {
        name: "vllm",
        baseUrl: "http://127.0.0.1:9/v1",
        model: "served-model",
        apiKeyEnv: "VLLM_KEY",
      });
    });

    it("exits 2 naming the flag when --name is missing, or a source flag is missing or doubled, and registers nothing", async () => {
      const before = (await listModelVersions(db, server.tenantId)).length;
      const cases: [string[], RegExp][] = [
        [["--artifact-dir", "x"], /--name is required/],
        [["--name", "x"], /--artifact-dir <dir> or --upstream <name> --upstream-model <id> is required/],
        [["--name", "x", "--upstream", "vllm"], /--upstream-model is required with --upstream/],
        [
          ["--name", "x", "--artifact-dir", "x", "--upstream", "vllm"],
          /--artifact-dir and --upstream are exclusive/,
        ],
        [
          ["--name", "x", "--artifact-dir", "x", "--status", "canary"],
          /--status: expected candidate or promoted, got "canary"/,
        ],
      ];
      for (const [flags, message] of cases) {
        const done = await runArcCli(server, ["models", "register", ...flags]);
        assert.equal(done.code, 2, flags.join(" "));
        assert.match(done.out, message);
      }
      assert.equal((await listModelVersions(db, server.tenantId)).length, before);
    });

    it("exits 2 with the server's 403 message for a second --status promoted", async () => {
      const done = await runArcCli(server, [
        "models",
        "register",
        "--name",
        "shortcut",
        "--artifact-dir",
        "run_1/step-10",
        "--status",
        "promoted",
      ]);
      assert.equal(done.code, 2);
      assert.match(
        done.out,
        /POST \/v1\/model-versions failed with 403: status: only a tenant's first model may be registered as promoted/,
      );
      assert.deepEqual(
        (await listModelVersions(db, server.tenantId, ["promoted"])).map((m) => m.name),
        ["base"],
      );
    });
  });
}
