import assert from "node:assert/strict";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { createArc } from "@arc/sdk";
import type { OpenAITestServer } from "@arc/sdk/test-doubles";
import OpenAI from "openai";
import {
  type GatewayOnTestProvider,
  startGatewayOnTestProvider,
} from "../serve/__fixtures__/gateway-on-test-provider.ts";
import type { RunningServer } from "../serve/start-server.ts";
import type { ModelVersion } from "../store/model-registry.ts";

/** An agent that uses the SDK and calls Arc's own gateway is traced once: the gateway joins the SDK's trace. */
describe("SDK through the gateway", () => {
  let gateway: GatewayOnTestProvider;
  let provider: OpenAITestServer;
  let server: RunningServer;
  let model: ModelVersion;
  let key: string;

  before(async () => {
    gateway = await startGatewayOnTestProvider();
    ({ provider, server, model, key } = gateway);
    provider.reply = () => ({ content: '{"tool":"get_weather","args":{"city":"Oslo"}}' });
  });
  after(() => gateway?.close());

  const get = async (path: string) => {
    const res = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it("stores one trace with one llm step carrying the gateway's model version, under the SDK's trace id", async () => {
    const arc = createArc({ baseUrl: server.url, apiKey: key, flushIntervalMs: 20 });
    const client = arc.wrapOpenAI(new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key }));
    let traceId = "";
    const reply = await arc.trace(
      "weather-agent",
      async (handle) => {
        traceId = handle.traceId;
        return client.chat.completions.create({
          model: "arc",
          messages: [{ role: "user", content: "Weather in Oslo?" }],
        });
      },
      { env: "toolcall", metadata: { team: "support" } },
    );
    assert.equal(reply.choices[0].message.content, '{"tool":"get_weather","args":{"city":"Oslo"}}');
    await arc.shutdown();
    await server.release.gateway.flush();

    const { status, body } = await get(`/v1/traces/${traceId}`);
    assert.equal(status, 200);
    const trace = body as {
      name: string;
      metadata: Record<string, unknown>;
      steps: { id: string; kind: string; llm?: { modelVersion?: string } }[];
    };
    assert.equal(trace.steps.length, 1, "the SDK's step and the gateway's are one step");
    assert.equal(trace.steps[0].kind, "llm");
    assert.equal(
      trace.steps[0].llm?.modelVersion,
      model.id,
      "the gateway's model version, whichever copy was stored",
    );
    assert.equal(trace.name, "weather-agent");
    assert.equal(trace.metadata.team, "support", "the SDK's metadata is kept");
    assert.equal(trace.metadata.source, "gateway", "the gateway's metadata is merged in");
    assert.equal(trace.metadata.modelVersion, model.id);
    const list = (await get("/v1/traces?limit=100")).body as { data: { id: string }[] };
    assert.deepEqual(
      list.data.map((t) => t.id),
      [traceId],
      "no second trace recorded by the gateway",
    );
  });

  it("sends no Arc correlation headers to a provider that is not the Arc server", async () => {
    const seen: IncomingHttpHeaders[] = [];
    const other: Server = createServer((req, res) => {
      seen.push(req.headers);
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            id: "c1",
            object: "chat.completion",
            created: 0,
            model: "m",
            choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }],
          }),
        );
      });
    });
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    const port = (other.address() as AddressInfo).port;
    try {
      const arc = createArc({ baseUrl: server.url, apiKey: key, flushIntervalMs: 20 });
      const client = arc.wrapOpenAI(new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: "k" }));
      await arc.trace("elsewhere", () =>
        client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] }),
      );
      await arc.shutdown();
      assert.equal(seen.length, 1);
      assert.equal(seen[0]["x-arc-trace-id"], undefined);
      assert.equal(seen[0]["x-arc-step-id"], undefined);
    } finally {
      await new Promise<void>((resolve) => other.close(() => resolve()));
    }
  });
});
