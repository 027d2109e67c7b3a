import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { OpenAITestServer } from "@arc/sdk/test-doubles";
import OpenAI from "openai";
import { loadServerConfig } from "../config/server-config.ts";
import { type RunningServer, startServer } from "../serve/start-server.ts";
import { registerModelVersion } from "../store/model-registry.ts";
import { findTenant } from "../store/tenants.ts";

/** Calls made, and how many are in flight at once. */
const calls = 1000;
const inFlight = 64;

/**
 * Every call through the gateway is a trace, under load too: many calls at once (a third of them streamed) through
 * `arc serve` on its embedded store, each answered before its trace is written, and then every one of them stored.
 * The upstream is the SDK's OpenAI test server (a test double of a hosted model).
 */
describe("gateway traces under load", () => {
  let home: string;
  let provider: OpenAITestServer;
  let server: RunningServer;
  let tenantId: string;
  let key: string;

  before(async () => {
    home = mkdtempSync(join(tmpdir(), "arc-traces-under-load-"));
    provider = await OpenAITestServer.start();
    provider.reply = () => ({ content: "It is 12 degrees and cloudy in Oslo." });
    server = await startServer(loadServerConfig({}, { home, port: 0 }));
    key = server.credentials?.tenantKey as string;
    tenantId = (await findTenant(server.db, server.credentials?.tenant as string))?.id as string;
    await registerModelVersion(server.db, tenantId, {
      name: "upstream-model",
      status: "promoted",
      upstream: { baseUrl: provider.url, model: "m" },
      actor: "test",
    });
  });
  after(async () => {
    await server?.close();
    await provider?.close();
    rmSync(home, { recursive: true, force: true });
  });

  it(`records all ${calls} calls made ${inFlight} at a time, each once`, async () => {
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key, maxRetries: 0 });
    let next = 0;
    const answered: string[] = [];
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next < calls) {
          const tag = `call ${next++}`;
          const messages = [{ role: "user" as const, content: `Weather in Oslo? [${tag}]` }];
          if (answered.length % 3 === 0) {
            const stream = await client.chat.completions.create({ model: "arc", messages, stream: true });
            for await (const _ of stream);
          } else {
            const reply = await client.chat.completions.create({ model: "arc", messages });
            assert.equal(reply.choices[0].message.content, "It is 12 degrees and cloudy in Oslo.");
          }
          answered.push(tag);
        }
      }),
    );
    assert.equal(answered.length, calls);

    await server.release.gateway.flush();
    const rows = await server.db.query<{ input: string }>(
      "select input #>> '{}' as input from traces where tenant_id = $1",
      [tenantId],
    );
    const tags = rows.map((r) => /\[(call \d+)\]/.exec(r.input)?.[1]);
    assert.equal(rows.length, calls, `${rows.length} traces stored for ${calls} calls`);
    assert.deepEqual(new Set(tags), new Set(answered), "each call's own trace, none twice");

    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    const outcome = (name: string) =>
      Number(new RegExp(`arc_gateway_traces_total\\{outcome="${name}"\\} (\\d+)`).exec(metrics)?.[1] ?? 0);
    assert.equal(outcome("stored"), calls);
    assert.equal(outcome("dropped") + outcome("lost") + outcome("rejected"), 0);
  });
});
