import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { waitUntil } from "@arc/core/testing";
import OpenAI from "openai";
import type { RegistrationPolicy } from "../../deploy/registration-policy.ts";
import { ModelPool } from "../../gateway/model-pool.ts";
import {
  type ReleaseTestServer,
  startReleaseTestServer,
} from "../../serve/__fixtures__/release-test-server.ts";
import type { Database } from "../../store/database.ts";
import { listModelVersions } from "../../store/model-registry.ts";
import { databasesUnderTest } from "../../store/test-databases.ts";

/** A registration answer: the model version, or an error. */
type Answer = { error: { message: string; field?: string }; [key: string]: unknown };

const adminKey = "arc_admin_secret_that_must_never_leave_the_server";
const upstreamKey = "sk-allowed-upstream-key";

/** An OpenAI-compatible listener that records every request it gets (stands in for an attacker's or a vLLM server). */
async function listener(): Promise<{ url: string; seen: IncomingHttpHeaders[]; server: Server }> {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          id: "x",
          object: "chat.completion",
          created: 0,
          model: "m",
          choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, seen, server };
}

for (const target of databasesUnderTest()) {
  describe(`model registration over HTTP on ${target.name}`, { skip: target.skip }, () => {
    let db: Database;
    let home: string;
    let upstream: Awaited<ReturnType<typeof listener>>;
    let attacker: Awaited<ReturnType<typeof listener>>;
    let acme: ReleaseTestServer;
    let globex: ReleaseTestServer;

    const register = async (server: ReleaseTestServer, body: unknown) => {
      const res = await fetch(`${server.url}/v1/model-versions`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Answer };
    };
    /** Makes a checkpoint folder (its config.json) under a tenant's artifact folder; returns its path. */
    const checkpoint = async (tenantId: string, folder: string) => {
      const dir = join(home, "artifacts", tenantId, folder);
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, "config.json"), "{}");
      return dir;
    };
    const chat = (server: ReleaseTestServer) =>
      new OpenAI({ baseURL: `${server.url}/v1`, apiKey: server.key, maxRetries: 0 }).chat.completions
        .create({ model: "arc", messages: [{ role: "user", content: "hi" }] })
        .then(
          () => "answered",
          (e: { status?: number }) => e.status,
        );

    before(async () => {
      db = await target.open();
      home = await mkdtemp(join(tmpdir(), "arc-registration-"));
      upstream = await listener();
      attacker = await listener();
      const registration: RegistrationPolicy = {
        home,
        upstreams: { vllm: { baseUrl: upstream.url, apiKeyEnv: "VLLM_KEY" } },
      };
      const pool = new ModelPool({ env: { ARC_ADMIN_KEY: adminKey, VLLM_KEY: upstreamKey } });
      acme = await startReleaseTestServer(db, { pool, registration });
      globex = await startReleaseTestServer(db, { pool, registration });
    });
    after(async () => {
      await acme?.close();
      await globex?.close();
      for (const l of [upstream, attacker]) await new Promise((r) => l?.server.close(r));
      await db?.close();
      await rm(home, { recursive: true, force: true });
    });

    it("refuses a tenant's upstream with its own URL and server env var, so the admin key never reaches the tenant's listener", async () => {
      const exploit = await register(acme, {
        name: "steal",
        status: "promoted",
        upstream: { baseUrl: attacker.url, model: "m", apiKeyEnv: "ARC_ADMIN_KEY" },
      });
      assert.equal(exploit.status, 400);
      assert.match(JSON.stringify(exploit.body), /unrecognized key.*baseUrl|baseUrl.*apiKeyEnv/i);
      assert.notEqual(await chat(acme), "answered");
      assert.deepEqual(attacker.seen, []);
    });

    it("serves an allowlisted upstream by name with the admin's key variable, not one the tenant chose", async () => {
      const unknown = await register(acme, { name: "nope", upstream: { name: "internal", model: "m" } });
      assert.equal(unknown.status, 400);
      assert.match(unknown.body.error.message, /upstream\.name: expected one of .*vllm.*got "internal"/);

      const made = await register(acme, {
        name: "hosted",
        status: "promoted",
        upstream: { name: "vllm", model: "served-model" },
      });
      assert.equal(made.status, 201);
      assert.deepEqual(made.body.upstream, {
        name: "vllm",
        baseUrl: upstream.url,
        model: "served-model",
        apiKeyEnv: "VLLM_KEY",
      });
      assert.equal(await chat(acme), "answered");
      assert.equal(upstream.seen.at(-1)?.authorization, `Bearer ${upstreamKey}`);
      assert.ok(!JSON.stringify(upstream.seen).includes(adminKey));
      assert.deepEqual(attacker.seen, []);
    });

    it("takes an adapter only from the tenant's own artifact folder, in PEFT's layout, and names the field", async () => {
      const outside = await register(acme, {
        name: "adapter-outside",
        upstream: { name: "vllm", model: "base", adapter: "../other-tenant/adapter" },
      });
      assert.equal(outside.status, 400);
      assert.match(outside.body.error.message, /^upstream\.adapter: expected a folder under /);
      const notPeft = await register(acme, {
        name: "adapter-empty",
        upstream: { name: "vllm", model: "base", adapter: "no-such-adapter" },
      });
      assert.equal(notPeft.status, 400);
      assert.match(
        notPeft.body.error.message,
        /upstream\.adapter: expected a LoRA adapter folder in PEFT's layout/,
      );
      const squat = await register(acme, {
        name: "squat",
        upstream: { name: "vllm", model: "mv_0123456789ab" },
      });
      assert.equal(squat.status, 400, "an adapter version's served name is not a model a tenant may name");
      assert.match(
        squat.body.error.message,
        /^upstream\.model: "mv_0123456789ab" is the name an adapter version/,
      );
      const dir = join(home, "artifacts", acme.tenantId, "adapter-1");
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, "adapter_config.json"), "{}");
      const made = await register(acme, {
        name: "adapter-1",
        upstream: { name: "vllm", model: "base", adapter: "adapter-1" },
      });
      assert.equal(made.status, 201);
      const id = (made.body as unknown as { id: string }).id;
      assert.deepEqual((made.body as unknown as { upstream: unknown }).upstream, {
        name: "vllm",
        baseUrl: upstream.url,
        model: id,
        apiKeyEnv: "VLLM_KEY",
        adapter: { base: "base", path: dir },
      });
    });

    it("lets only a tenant's first model be registered as promoted; later ones must be candidates", async () => {
      const second = await register(acme, {
        name: "shortcut",
        status: "promoted",
        upstream: { name: "vllm", model: "other" },
      });
      assert.equal(second.status, 403);
      assert.match(second.body.error.message, /only a tenant's first model may be registered as promoted/);
      const candidate = await register(acme, { name: "cand", upstream: { name: "vllm", model: "other" } });
      assert.equal(candidate.status, 201);
      assert.equal(candidate.body.status, "candidate");
    });

    it("promotes exactly one of eight concurrent first registrations as promoted and refuses the rest with 403", async () => {
      const fresh = await startReleaseTestServer(db, { registration: { home, upstreams: {} } });
      for (let i = 0; i < 8; i++) await checkpoint(fresh.tenantId, `base-${i}`);
      const registerAll = () =>
        Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            register(fresh, { name: `first-${i}`, status: "promoted", artifactDir: `base-${i}` }),
          ),
        );
      try {
        let pending: ReturnType<typeof registerAll> | undefined;
        if (db.kind === "postgres") {
          // PostgreSQL answers fast enough that the requests rarely overlap on their own: hold the registry table
          // until all eight wait behind it (directly, or behind one that does), so every check runs before any insert.
          await db.transaction(async (tx) => {
            await tx.query("lock table model_versions in access exclusive mode");
            const [{ pid }] = await tx.query<{ pid: number }>("select pg_backend_pid() as pid");
            pending = registerAll();
            await waitUntil(async () => {
              const [{ waiting }] = await db.query<{ waiting: number }>(
                `with recursive behind(pid) as (
                   select pid from pg_stat_activity where $1 = any(pg_blocking_pids(pid))
                   union select a.pid from pg_stat_activity a join behind b on b.pid = any(pg_blocking_pids(a.pid))
                 ) select count(*)::int as waiting from behind`,
                [pid],
              );
              return waiting === 8;
            }, "eight registrations waiting behind the locked registry");
          });
        }
        const answers = await (pending ?? registerAll());
        const statuses = answers.map((a) => a.status).sort();
        assert.deepEqual(statuses, [201, 403, 403, 403, 403, 403, 403, 403]);
        for (const refused of answers.filter((a) => a.status === 403)) {
          assert.match(
            refused.body.error.message,
            /only a tenant's first model may be registered as promoted/,
          );
        }
        const models = await listModelVersions(db, fresh.tenantId);
        assert.equal(models.length, 1);
        assert.equal(models[0].status, "promoted");
        assert.equal(models[0].id, answers.find((a) => a.status === 201)?.body.id);
      } finally {
        await fresh.close();
      }
    });

    it("takes checkpoints only under the tenant's own artifact folder, relative paths starting there", async () => {
      await checkpoint(acme.tenantId, "run_1/step-10");
      const mine = await register(acme, { name: "ckpt", artifactDir: "run_1/step-10" });
      assert.equal(mine.status, 201);
      assert.equal(mine.body.artifactDir, join(home, "artifacts", acme.tenantId, "run_1", "step-10"));

      const globexDir = join(home, "artifacts", globex.tenantId, "secret-run");
      for (const artifactDir of ["/etc", "../../etc", globexDir, `../${globex.tenantId}/secret-run`, "."]) {
        const res = await register(acme, { name: `bad-${artifactDir}`, artifactDir });
        assert.equal(res.status, 400, artifactDir);
        assert.equal(res.body.error.field, "artifactDir");
        assert.match(res.body.error.message, /artifactDir: expected a folder under .*artifacts/);
      }
    });

    it("refuses a symbolic link in the tenant's folder that leads outside it", async () => {
      const root = join(home, "artifacts", acme.tenantId);
      await mkdir(root, { recursive: true });
      await symlink("/etc", join(root, "escape"));
      const res = await register(acme, { name: "linked", artifactDir: "escape/ssl" });
      assert.equal(res.status, 400);
      assert.equal(res.body.error.field, "artifactDir");
    });

    it("refuses a checkpoint folder that does not exist, is a file or holds no config.json, naming the path as sent", async () => {
      const root = join(home, "artifacts", acme.tenantId);
      await mkdir(join(root, "empty"), { recursive: true });
      await writeFile(join(root, "weights.bin"), "");
      for (const [artifactDir, problem] of [
        ["no-such-run/step-10", "does not exist in your artifact folder"],
        [join(root, "no-such-run"), "does not exist"],
        ["weights.bin", "is a file, not a checkpoint folder"],
        ["empty", "holds no config.json: expected a checkpoint in the Hugging Face layout"],
      ]) {
        const res = await register(acme, { name: `missing-${artifactDir}`, artifactDir });
        assert.equal(res.status, 400, artifactDir);
        assert.equal(res.body.error.field, "artifactDir");
        assert.ok(res.body.error.message.startsWith(`artifactDir: "${artifactDir}" ${problem}`), artifactDir);
        if (!artifactDir.startsWith("/")) assert.ok(!res.body.error.message.includes(home), "no server path");
      }
      const names = (await listModelVersions(db, acme.tenantId)).map((m) => m.name);
      assert.ok(!names.some((n) => n.startsWith("missing-")), names.join(", "));
    });

    it("refuses a query parameter the model list does not take, naming it", async () => {
      const typo = await fetch(`${acme.url}/v1/model-versions?stauts=candidate`, {
        headers: { authorization: `Bearer ${acme.key}` },
      });
      assert.equal(typo.status, 400);
      assert.match(
        ((await typo.json()) as Answer).error.message,
        /Unrecognized key\(s\) in object: 'stauts'/,
      );
    });

    it("answers 404 for a parent model of another tenant", async () => {
      await checkpoint(globex.tenantId, "base");
      await checkpoint(acme.tenantId, "c");
      const theirs = await register(globex, { name: "g-base", artifactDir: "base" });
      assert.equal(theirs.status, 201);
      const res = await register(acme, { name: "child", artifactDir: "c", parentId: theirs.body.id });
      assert.equal(res.status, 404);
    });

    it("answers 400 naming the problem for a null or mistyped release-settings body, and changes nothing", async () => {
      const put = async (body: string) => {
        const res = await fetch(`${acme.url}/v1/release-settings`, {
          method: "PUT",
          headers: { authorization: `Bearer ${acme.key}`, "content-type": "application/json" },
          body,
        });
        return { status: res.status, body: (await res.json()) as Answer };
      };
      const before = await (
        await fetch(`${acme.url}/v1/release-settings`, { headers: { authorization: `Bearer ${acme.key}` } })
      ).json();
      const nul = await put("null");
      assert.equal(nul.status, 400);
      assert.match(nul.body.error.message, /expected object, received null/i);
      const typo = await put('{"gate": {"minNdr": 0.5}}');
      assert.equal(typo.status, 400);
      assert.match(typo.body.error.message, /unrecognized key.*'gate'/i);
      const nested = await put('{"gates": {"minNdr": 0.5, "minFunctionl": 0.1}}');
      assert.equal(nested.status, 400);
      assert.match(nested.body.error.message, /gates.*unrecognized key.*'minFunctionl'/i);
      const nullPart = await put('{"canary": null}');
      assert.equal(nullPart.status, 400);
      assert.match(nullPart.body.error.message, /canary.*expected object, received null/i);
      const after = await (
        await fetch(`${acme.url}/v1/release-settings`, { headers: { authorization: `Bearer ${acme.key}` } })
      ).json();
      assert.deepEqual(after, before);
    });

    it("answers 400 naming an unknown key in a handed-over EvalSet", async () => {
      const res = await fetch(`${acme.url}/v1/eval-sets`, {
        method: "POST",
        headers: { authorization: `Bearer ${acme.key}`, "content-type": "application/json" },
        body: JSON.stringify({
          kind: "eval",
          version: "v1",
          rows: [
            { id: "r1", question: "q", env: "toolcall", solution: 1, meta: { slice: "general" }, extra: 1 },
          ],
        }),
      });
      assert.equal(res.status, 400);
      assert.match(((await res.json()) as Answer).error.message, /rows\.0.*unrecognized key.*'extra'/i);
    });

    it("refuses a lineage whose known fields are not what the dashboard and the release path read, naming the field", async () => {
      const upstream = { name: "vllm", model: "m" };
      for (const [lineage, field] of [
        [{ datasets: 5 }, "lineage.datasets"],
        [{ datasets: ["ds_1"] }, "lineage.datasets.0"],
        [{ patterns: [{}] }, "lineage.patterns.0"],
        [{ runId: 7 }, "lineage.runId"],
        [{ sourceTraceCount: -1 }, "lineage.sourceTraceCount"],
      ] as const) {
        const res = await register(acme, { name: `lineage-${field}`, upstream, lineage });
        assert.equal(res.status, 400, JSON.stringify(lineage));
        assert.equal(res.body.error.field, field, JSON.stringify(res.body));
      }
      const whole = await register(acme, {
        name: "lineage-whole",
        upstream,
        lineage: { runId: "run_1", datasets: [{ id: "ds_1", version: "v1", kind: "prompts" }], note: "kept" },
      });
      assert.equal(whole.status, 201, JSON.stringify(whole.body));
      assert.deepEqual(whole.body.lineage, {
        runId: "run_1",
        datasets: [{ id: "ds_1", version: "v1", kind: "prompts" }],
        note: "kept",
      });
    });

    it("refuses lineage nested 2,500 levels deep, so the tenant's model list keeps answering", async () => {
      const deep = `${"[".repeat(2500)}${"]".repeat(2500)}`;
      const res = await fetch(`${acme.url}/v1/model-versions`, {
        method: "POST",
        headers: { authorization: `Bearer ${acme.key}`, "content-type": "application/json" },
        body: `{"name":"deep","upstream":{"name":"vllm","model":"m"},"lineage":{"runs":${deep}}}`,
      });
      assert.equal(res.status, 400);
      const error = ((await res.json()) as Answer).error;
      assert.equal(error.field, `lineage.runs${".0".repeat(62)}`);
      assert.match(error.message, /nested deeper than 64 levels/);
      const list = await fetch(`${acme.url}/v1/model-versions`, {
        headers: { authorization: `Bearer ${acme.key}` },
      });
      assert.equal(list.status, 200);
    });
  });
}
