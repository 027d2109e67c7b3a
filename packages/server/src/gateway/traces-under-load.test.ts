import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import {
  type GatewayOnTestProvider,
  startGatewayOnTestProvider,
} from "../serve/__fixtures__/gateway-on-test-provider.ts";
import type { RunningServer } from "../serve/start-server.ts";

/** Calls made, and how many are in flight at once. */
const calls = 1000;
const inFlight = 64;

/**
 * Every call through the gateway is a trace, under load too: many calls at once (a third of them streamed) through
 * `arc serve` on its embedded store, each answered before its trace is written, and then every one of them stored.
 * The upstream is the SDK's OpenAI test server (a test double of a hosted model).
 */
describe("gateway traces under load", () => {
  let gateway: GatewayOnTestProvider;
  let server: RunningServer;
  let tenantId: string;
  let key: string;

  before(async () => {
    gateway = await startGatewayOnTestProvider();
    ({ server, tenantId, key } = gateway);
    gateway.provider.reply = () => ({ content: "It is 12 degrees and cloudy in Oslo." });
  });
  after(() => gateway?.close());

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
