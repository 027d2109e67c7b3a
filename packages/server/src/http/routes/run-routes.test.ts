import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Hono } from "hono";
import { ServerMetrics } from "../../metrics/metrics-registry.ts";
import {
  ingestJudged,
  QUICK_RUN,
  tenantWithProduction,
  toolcallTraffic,
} from "../../orchestrator/__fixtures__/orchestrator-tenant.ts";
import { Orchestrator } from "../../orchestrator/orchestrator.ts";
import { OrchestratorConfig } from "../../orchestrator/orchestrator-config.ts";
import { JOB_LOG_FILE } from "../../orchestrator/ray-job-run.ts";
import {
  createRun,
  getRun,
  type RunRecord,
  TENANT_TRIGGER,
  tenantRunsDir,
} from "../../orchestrator/run-store.ts";
import { REPOSITORY_ROOT } from "../../orchestrator/train-process.ts";
import type { Database } from "../../store/database.ts";
import { createApiKey } from "../../store/keys.ts";
import { registerModelVersion } from "../../store/model-registry.ts";
import { databasesUnderTest } from "../../store/test-databases.ts";
import { createApp } from "../app.ts";
import { Authenticator } from "../authenticator.ts";
import { runRoutes } from "./run-routes.ts";

const { traffic, setupRegistry } = toolcallTraffic(33, 120);

for (const target of databasesUnderTest()) {
  describe(`run routes on ${target.name}`, { skip: target.skip }, () => {
    let db: Database;
    let app: Hono;
    let orchestrator: Orchestrator;
    let acme: Awaited<ReturnType<typeof tenantWithProduction>>;
    const keys: Record<string, string> = {};
    before(async () => {
      db = await target.open();
      acme = await tenantWithProduction(db, "acme");
      const globex = await tenantWithProduction(db, "globex");
      await ingestJudged(db, acme.tenantId, traffic, setupRegistry);
      keys.acme = (await createApiKey(db, { role: "tenant", tenantId: acme.tenantId })).key;
      keys.globex = (await createApiKey(db, { role: "tenant", tenantId: globex.tenantId })).key;
      const config = OrchestratorConfig.parse({ minNewFailures: 5, pollMs: 100, datasetSize: 16 });
      orchestrator = new Orchestrator({ db, config, artifactsDir: acme.artifactsDir, setupRegistry });
      app = createApp({
        db,
        authenticator: new Authenticator(db),
        metrics: new ServerMetrics(),
        maxBodyBytes: 1 << 20,
        tenantRoutes: [
          {
            path: "/",
            app: runRoutes({ db, config, artifactsDir: acme.artifactsDir, maxBodyBytes: 1 << 20 }),
          },
        ],
      });
    });
    after(async () => {
      await orchestrator?.close();
      await db?.close();
    });

    const call = async (tenant: string, method: string, path: string, body?: unknown) => {
      const res = await app.request(`/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${keys[tenant]}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const message = (res: { body: Record<string, unknown> }) =>
      String((res.body.error as { message?: string } | undefined)?.message);
    /** Fails when an answer names a server folder: the repository root or the server's home (`<home>/artifacts`). */
    const assertNoServerPath = (body: unknown) => {
      const text = JSON.stringify(body);
      assert.ok(!text.includes(REPOSITORY_ROOT), text);
      assert.ok(!text.includes(dirname(acme.artifactsDir)), text);
      assert.ok(!text.includes("runsDir"), text);
    };
    /** Stores a run as an earlier server queued it for a tenant, with whatever overrides it took then. */
    const storedTenantRun = (overrides: string[], baseModelId = acme.base.id) =>
      createRun(db, acme.tenantId, {
        trigger: TENANT_TRIGGER,
        recipePath: "recipes/toolcall-dpo.yaml",
        overrides,
        runsDir: tenantRunsDir(acme.artifactsDir, acme.tenantId),
        baseModelId,
      });

    it("queues a run, shows its progress and metrics per step once trained, and lists it with the orchestrator's status", async () => {
      const made = await call("acme", "POST", "/runs", { recipe: "toolcall-dpo", overrides: QUICK_RUN });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      const run = made.body as unknown as RunRecord;
      assert.equal(run.status, "queued");
      assert.equal(run.trigger, "api");
      assert.deepEqual(
        (await orchestrator.tick()).started.map((r) => r.id),
        [run.id],
      );
      await orchestrator.idle();
      const shown = await call("acme", "GET", `/runs/${run.id}`);
      const shownRun = shown.body.run as RunRecord;
      assert.equal(shownRun.status, "succeeded", shownRun.error ?? "");
      assert.equal(shownRun.step, 2);
      assert.deepEqual(
        (shown.body.records as { step: number }[]).map((r) => r.step),
        [0, 1, 2],
      );
      assert.equal(typeof shownRun.metrics.reward, "number");
      const listed = await call("acme", "GET", "/runs?status=succeeded");
      assert.deepEqual(
        (listed.body.data as RunRecord[]).map((r) => r.id),
        [run.id],
      );
      const status = listed.body.orchestrator as { enabled: boolean; reason: string };
      assert.equal(status.enabled, false);
      assert.match(status.reason, /off/);
    });

    it("cancels a queued run at once and a running one after its current step, with no candidate", async () => {
      const queued = (await call("acme", "POST", "/runs", { overrides: QUICK_RUN }))
        .body as unknown as RunRecord;
      const cancelled = await call("acme", "POST", `/runs/${queued.id}/cancel`);
      assert.equal((cancelled.body as unknown as RunRecord).status, "cancelled");
      assert.deepEqual((await orchestrator.tick()).started, [], "a cancelled run is never claimed");

      const long = (await call("acme", "POST", "/runs", { overrides: [...QUICK_RUN, "trainer.steps=200"] }))
        .body as unknown as RunRecord;
      await orchestrator.tick();
      await call("acme", "POST", `/runs/${long.id}/cancel`);
      await orchestrator.idle();
      const ended = (await call("acme", "GET", `/runs/${long.id}`)).body.run as RunRecord;
      assert.equal(ended.status, "cancelled", ended.error ?? "");
      assert.ok(ended.step < 200);
      assert.equal(ended.candidateId, null);
      const again = await call("acme", "POST", `/runs/${long.id}/cancel`);
      assert.equal(again.status, 400);
      assert.match(String((again.body.error as { message: string }).message), /only a queued or running run/);
    });

    it("refuses overrides outside the tunable keys, unknown recipes and invalid recipe values with the field named", async () => {
      const model = await call("acme", "POST", "/runs", { overrides: ["model.path=/etc"] });
      assert.equal(model.status, 400);
      assert.match(message(model), /"model\.path" is not a key a run request may override/);
      assert.match(message(model), /trainer\.steps, /);
      const algorithm = await call("acme", "POST", "/runs", { overrides: ["trainer.algorithm=grpo"] });
      assert.equal(algorithm.status, 400);
      assert.match(message(algorithm), /"trainer\.algorithm" is not a key/);
      const unknown = await call("acme", "POST", "/runs", { recipe: "nope" });
      assert.equal(unknown.status, 400);
      assert.match(message(unknown), /no shipped recipe "nope"/);
      const traversal = await call("acme", "POST", "/runs", { recipe: "../etc/passwd" });
      assert.equal(traversal.status, 400);
      const steps = await call("acme", "POST", "/runs", { overrides: ["trainer.steps=many"] });
      assert.equal(steps.status, 400);
      assert.match(
        message(steps),
        /^recipes\/toolcall-dpo\.yaml: trainer\.steps: expected number, got string/,
      );
    });

    it("refuses a recipe that does not train the tenant's model (a teacher's, a base model's), naming why", async () => {
      const queued = async () => (await call("acme", "GET", "/runs?status=queued")).body.data as RunRecord[];
      const before = (await queued()).length;
      for (const [recipe, why] of [
        ["teacher-sft", /adaptive teacher of the frozen student models\/toolcall-base/],
        ["teacher-grpo", /adaptive teacher/],
        ["base-model-sft", /a base model from fresh weights/],
      ] as const) {
        const res = await call("acme", "POST", "/runs", { recipe });
        assert.equal(res.status, 400, JSON.stringify(res.body));
        assert.equal((res.body.error as { field?: string }).field, "recipe");
        assert.match(message(res), new RegExp(`^recipe: recipes/${recipe}\\.yaml cannot train your model: `));
        assert.match(message(res), why);
        assertNoServerPath(res.body);
      }
      assert.equal((await queued()).length, before);
    });

    it("answers a job log's last lines, and refuses a tail or a query parameter it does not take", async () => {
      const run = await storedTenantRun(QUICK_RUN);
      const dir = join(tenantRunsDir(acme.artifactsDir, acme.tenantId), run.id);
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, JOB_LOG_FILE), "one\ntwo\nthree");
      assert.deepEqual((await call("acme", "GET", `/runs/${run.id}/logs?tail=2`)).body, {
        logs: "two\nthree",
      });
      for (const tail of ["many", "0", "1.5", "10001"]) {
        const res = await call("acme", "GET", `/runs/${run.id}/logs?tail=${tail}`);
        assert.equal(res.status, 400, tail);
        assert.equal((res.body.error as { field?: string }).field, "tail", tail);
      }
      const typo = await call("acme", "GET", "/runs?stauts=queued");
      assert.equal(typo.status, 400);
      assert.match(message(typo), /Unrecognized key\(s\) in object: 'stauts'/);
      await call("acme", "POST", `/runs/${run.id}/cancel`);
    });

    it("answers 400s that name the recipe by its repository path, never a server path", async () => {
      const bad = [
        { overrides: ["trainer.steps=many"] },
        { overrides: ["trainer.temperature=0.5", "trainer.decoupled=true"] },
        { recipe: "toolcall-grpo", overrides: ["trainer.steps=many"] },
      ];
      for (const body of bad) {
        const res = await call("acme", "POST", "/runs", body);
        assert.equal(res.status, 400, JSON.stringify(res.body));
        assert.ok(!message(res).includes(REPOSITORY_ROOT), message(res));
        assert.ok(!message(res).includes(tmpdir()), message(res));
        assert.match(message(res), /^recipes\/[a-z-]+\.yaml: /);
      }
    });

    it("keeps tenants apart: another tenant's run is not found, not listed and cannot be cancelled", async () => {
      const run = (await call("acme", "POST", "/runs", { overrides: QUICK_RUN }))
        .body as unknown as RunRecord;
      assert.equal((await call("globex", "GET", `/runs/${run.id}`)).status, 404);
      assert.equal((await call("globex", "POST", `/runs/${run.id}/cancel`)).status, 404);
      assert.deepEqual((await call("globex", "GET", "/runs")).body.data, []);
      assert.equal(((await call("acme", "GET", `/runs/${run.id}`)).body.run as RunRecord).status, "queued");
      await call("acme", "POST", `/runs/${run.id}/cancel`);
    });

    it("refuses __proto__, constructor and prototype in an override, and every tenant's routes and /health keep answering", async () => {
      try {
        for (const override of [
          "__proto__.polluted=1",
          "trainer.__proto__.polluted=1",
          "constructor.prototype.polluted=1",
          "trainer.prototype=1",
        ]) {
          const res = await call("acme", "POST", "/runs", { overrides: [override] });
          assert.equal(res.status, 400, `${override}: ${JSON.stringify(res.body)}`);
          assert.match(message(res), /(__proto__|constructor|prototype)" is never a recipe key/);
        }
        assert.equal(({} as Record<string, unknown>).polluted, undefined);
        assert.equal((await app.request("/health")).status, 200);
        assert.equal((await call("globex", "GET", "/runs")).status, 200);
        assert.equal((await call("acme", "GET", "/orchestrator")).status, 200);
      } finally {
        delete (Object.prototype as Record<string, unknown>).polluted;
      }
    });

    it("never takes a module or file path from a request: reward.module and data files are refused and nothing is imported", async () => {
      const dir = await mkdtemp(join(tmpdir(), "arc-reward-module-"));
      const marker = join(dir, "imported");
      const module = join(dir, "reward.mjs");
      await writeFile(
        module,
        `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker)}, "ran");\nexport default () => 1;\n`,
      );
      for (const override of [
        `reward.module=${module}`,
        "data.prompts=/etc/passwd",
        "data.preferences=/etc/passwd",
      ]) {
        const key = override.slice(0, override.indexOf("="));
        const res = await call("acme", "POST", "/runs", { overrides: [...QUICK_RUN, override] });
        assert.equal(res.status, 400, `${override}: ${JSON.stringify(res.body)}`);
        assert.ok(message(res).includes(`"${key}" is not a key a run request may override`), message(res));
      }
      const queued = (await call("acme", "GET", "/runs?status=queued")).body.data as RunRecord[];
      assert.deepEqual(queued, []);
      await orchestrator.tick();
      await orchestrator.idle();
      assert.equal(existsSync(marker), false, "the trainer imported a module a tenant named");
    });

    it("refuses a value over its key's cap, naming the key, the value and the cap, and queues nothing", async () => {
      for (const [override, cap] of [
        ["trainer.steps=1000000000", 1000],
        ["trainer.maxTokens=1000000", 512],
        ["trainer.promptsPerStep=100000", 64],
        ["trainer.samplesPerPrompt=100000", 16],
        ["data.count=100000000", 16384],
        ["data.evalCount=100000000", 512],
      ] as const) {
        const res = await call("acme", "POST", "/runs", { overrides: [...QUICK_RUN, override] });
        assert.equal(res.status, 400, `${override}: ${JSON.stringify(res.body)}`);
        assert.equal(
          message(res),
          `overrides: ${override} is more than a run request may set; at most ${cap}`,
          override,
        );
      }
      const capped = await call("acme", "POST", "/runs", { overrides: [...QUICK_RUN, "trainer.steps=1000"] });
      assert.equal(capped.status, 201, JSON.stringify(capped.body));
      await call("acme", "POST", `/runs/${(capped.body as { id: string }).id}/cancel`);
      assert.deepEqual((await call("acme", "GET", "/runs?status=queued")).body.data, []);
    });

    it("shows a tenant no server path: no runs folder in what queuing, showing, listing and cancelling a run answer", async () => {
      const made = await call("acme", "POST", "/runs", { overrides: QUICK_RUN });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      assertNoServerPath(made.body);
      assert.equal((made.body as { recipePath: string }).recipePath, "recipes/toolcall-dpo.yaml");
      const id = (made.body as { id: string }).id;
      assertNoServerPath((await call("acme", "GET", `/runs/${id}`)).body);
      assertNoServerPath((await call("acme", "GET", "/runs")).body);
      assertNoServerPath((await call("acme", "POST", `/runs/${id}/cancel`)).body);

      const operators = await createRun(db, acme.tenantId, {
        trigger: "orchestrator",
        recipePath: join(REPOSITORY_ROOT, "recipes/toolcall-dpo.yaml"),
        overrides: [
          `data.prompts=${join(dirname(acme.artifactsDir), "pool.jsonl")}`,
          "reward.module=/srv/elsewhere/reward.mjs",
          "trainer.steps=3",
        ],
        runsDir: tenantRunsDir(acme.artifactsDir, acme.tenantId),
      });
      const shown = (await call("acme", "POST", `/runs/${operators.id}/cancel`)).body as unknown as RunRecord;
      assertNoServerPath(shown);
      assert.equal(shown.recipePath, "recipes/toolcall-dpo.yaml");
      assert.deepEqual(shown.overrides, [
        "data.prompts=pool.jsonl",
        "reward.module=reward.mjs",
        "trainer.steps=3",
      ]);
    });

    it("stores a failed run's error without server paths: the recipe by its repository path, the trainer's stderr without the server's home", async () => {
      const invalid = await storedTenantRun([...QUICK_RUN, "trainer.steps=many"]);
      const brokenDir = join(dirname(acme.artifactsDir), "broken-model");
      await mkdir(brokenDir, { recursive: true });
      await writeFile(join(brokenDir, "config.json"), "{");
      const broken = await registerModelVersion(db, acme.tenantId, {
        name: "broken",
        artifactDir: brokenDir,
        actor: "test",
      });
      const crashing = await storedTenantRun(QUICK_RUN, broken.id);
      await orchestrator.tick();
      await orchestrator.idle();
      await orchestrator.tick();
      await orchestrator.idle();
      const stored = await getRun(db, acme.tenantId, invalid.id);
      assert.equal(stored.status, "failed");
      assert.match(
        stored.error ?? "",
        /^recipes\/toolcall-dpo\.yaml: trainer\.steps: expected number, got string/,
      );
      const crashed = await getRun(db, acme.tenantId, crashing.id);
      assert.equal(crashed.status, "failed");
      assert.match(
        crashed.error ?? "",
        /^arc train exited with \d+: .*broken-model\/config\.json: not valid JSON/,
      );
      for (const run of [stored, crashed]) {
        assert.ok(!(run.error ?? "").includes(REPOSITORY_ROOT), run.error ?? "");
        assert.ok(!(run.error ?? "").includes(dirname(acme.artifactsDir)), run.error ?? "");
        const shown = await call("acme", "GET", `/runs/${run.id}`);
        assertNoServerPath(shown.body);
        assert.equal((shown.body.run as RunRecord).error, run.error);
      }
    });

    it("checks a tenant's stored overrides again when its run starts: a key or value no request may set fails the run before the trainer", {
      timeout: 120_000,
    }, async () => {
      const dir = await mkdtemp(join(tmpdir(), "arc-stored-module-"));
      const marker = join(dir, "imported");
      const module = join(dir, "reward.mjs");
      await writeFile(
        module,
        `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker)}, "ran");\nexport default () => 1;\n`,
      );
      const withModule = await storedTenantRun([...QUICK_RUN, `reward.module=${module}`]);
      const tooLong = await storedTenantRun([...QUICK_RUN, "trainer.steps=1000000000"]);
      const operators = await createRun(db, acme.tenantId, {
        trigger: "orchestrator",
        recipePath: "recipes/toolcall-dpo.yaml",
        overrides: [...QUICK_RUN, "trainer.trainThreads=1"],
        runsDir: tenantRunsDir(acme.artifactsDir, acme.tenantId),
        baseModelId: acme.base.id,
      });
      for (let i = 0; i < 3; i++) {
        await orchestrator.tick();
        await orchestrator.idle();
      }
      const refused = await getRun(db, acme.tenantId, withModule.id);
      assert.equal(refused.status, "failed");
      assert.match(
        refused.error ?? "",
        new RegExp(
          `^run ${withModule.id} was not started: overrides: "reward\\.module" is not a key a run request may override`,
        ),
      );
      assert.equal(refused.step, 0);
      assert.deepEqual(refused.datasets, [], "no dataset was built for it");
      assert.equal(existsSync(marker), false, "the trainer imported a module a stored run named");
      const capped = await getRun(db, acme.tenantId, tooLong.id);
      assert.equal(capped.status, "failed");
      assert.equal(
        capped.error,
        `run ${tooLong.id} was not started: overrides: trainer.steps=1000000000 is more than a run request may set; at most 1000`,
      );
      const shown = (await call("acme", "GET", `/runs/${withModule.id}`)).body.run as RunRecord;
      assert.equal(shown.status, "failed");
      const ran = await getRun(db, acme.tenantId, operators.id);
      assert.equal(
        ran.status,
        "succeeded",
        `an orchestrator run takes the operator's overrides: ${ran.error}`,
      );
    });
  });
}
