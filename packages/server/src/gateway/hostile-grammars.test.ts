/**
 * The gateway under hostile grammars: a schema that blows up and a `$ref` cycle, through `response_format` and a
 * required tool, get a fast answer (200, or a 400 naming the field). `serve/grammar-attack.alone.test.ts` times
 * `/health` and another tenant's calls while these run.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { configForSize, initWeights, writeHfCheckpoint } from "@arc/engine";
import { loadServerConfig } from "../config/server-config.ts";
import { type RunningServer, startServer } from "../serve/start-server.ts";
import { registerModelVersion } from "../store/model-registry.ts";
import { findTenant } from "../store/tenants.ts";

const messages = [{ role: "user", content: "hi" }];

/** 16 $defs, each `{anyOf: [{$ref: next}, {$ref: next}]}`: 2^16 paths to one string. */
function chainOfChoices(levels: number): Record<string, unknown> {
  const $defs: Record<string, unknown> = {};
  for (let i = 0; i < levels; i++)
    $defs[`l${i}`] = { anyOf: [{ $ref: `#/$defs/l${i + 1}` }, { $ref: `#/$defs/l${i + 1}` }] };
  $defs[`l${levels}`] = { type: "string" };
  return { $defs, $ref: "#/$defs/l0" };
}

/** A chat body whose output must match `schema`, through `response_format` or as the one tool's parameters. */
function constrained(schema: unknown, via: "response_format" | "tools", extra: Record<string, unknown> = {}) {
  return via === "response_format"
    ? {
        model: "arc",
        messages,
        response_format: { type: "json_schema", json_schema: { name: "x", schema } },
        ...extra,
      }
    : {
        model: "arc",
        messages,
        tools: [{ type: "function", function: { name: "f", parameters: schema } }],
        tool_choice: "required",
        ...extra,
      };
}

describe("arc serve under hostile grammars", () => {
  let home: string;
  let server: RunningServer;
  let attacker: string;

  before(async () => {
    home = await mkdtemp(join(tmpdir(), "arc-hostile-grammars-"));
    const config = configForSize("tiny");
    await writeHfCheckpoint(join(home, "tiny"), config, initWeights(config, 1));
    server = await startServer(loadServerConfig({}, { home, port: 0 }));
    const first = (await findTenant(server.db, server.credentials?.tenant as string))?.id as string;
    attacker = server.credentials?.tenantKey as string;
    await registerModelVersion(server.db, first, {
      name: "tiny",
      status: "promoted",
      artifactDir: join(home, "tiny"),
      actor: "test",
    });
  });
  after(async () => {
    await server?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  /** POSTs a chat body with `key`; gives up after `ms`, so a request never answered fails the test. */
  const chat = async (key: string, body: unknown, ms = 30_000) => {
    const res = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(ms),
    });
    return { status: res.status, body: (await res.json()) as { error?: { param: string; message: string } } };
  };

  it("answers the blow-up schema and refuses the cycle naming the field, through response_format and a required tool", async () => {
    for (const via of ["response_format", "tools"] as const) {
      const blowUp = await chat(attacker, constrained(chainOfChoices(16), via, { max_tokens: 8 }), 10_000);
      assert.equal(blowUp.status, 200, JSON.stringify(blowUp.body));
      const cycle = await chat(attacker, constrained({ $ref: "#" }, via), 10_000);
      assert.equal(cycle.status, 400, JSON.stringify(cycle.body));
      const param = via === "tools" ? "tools[0].function.parameters" : "response_format.json_schema.schema";
      assert.equal(cycle.body.error?.param, param);
      assert.match(cycle.body.error?.message ?? "", /leads back to .* \(a \$ref cycle\)/);
    }
  });
});
