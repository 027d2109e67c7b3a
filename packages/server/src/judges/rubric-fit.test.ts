import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import {
  EmbeddedInferenceEngine,
  loadChatTokenizer,
  type RunningEngineServer,
  startEngineServer,
} from "@arc/engine";
import { runArcCli } from "../cli/__fixtures__/run-arc-cli.ts";
import { loadServerConfig } from "../config/server-config.ts";
import { type RunningServer, startServer } from "../serve/start-server.ts";

const MODEL_DIR = fileURLToPath(new URL("../../../../models/toolcall-judge", import.meta.url));
const SHIPPED_RUBRIC = JSON.parse(readFileSync(join(MODEL_DIR, "rubric.json"), "utf8"));

/** A 4-criterion rubric of about a kilobyte: the shipped judge's 1,024-token (byte) context cannot hold it. */
const LONG_RUBRIC = {
  instructions:
    "The agent answers a support desk's customers: refunds, exchanges, order tracking and address changes.",
  criteria: [
    "Call exactly one tool, the one whose purpose matches what the customer asked for, and never a booking tool.",
    "Copy every order id, amount, size and address the customer gave into the call's arguments, character for character.",
    "Leave out every argument the customer did not give a value for, rather than guessing a plausible default value.",
    "Never promise a refund, a delivery date or a discount in text: those are decided by the tools, not by the agent.",
  ],
  classes: [
    {
      name: "wrong_tool",
      description: "calls a tool other than the one the request needs, or none",
      severity: "high",
    },
    {
      name: "wrong_argument",
      description: "an argument's value differs from what the customer gave",
      severity: "medium",
    },
    {
      name: "invented_argument",
      description: "an argument the customer never gave a value for",
      severity: "medium",
    },
    { name: "promise", description: "promises a refund, date or discount in its text", severity: "high" },
  ],
};

// A real `arc serve`, and the shipped judge served as `arc engine serve` serves it: with its tokenizer and its
// 1,024-token context, which `/tokenize` reports.
describe("a rubric is checked against its judge's context with the judge's tokenizer", () => {
  let home: string;
  let engine: RunningEngineServer;
  let server: RunningServer;
  const api = async (method: string, path: string, body?: unknown) =>
    fetch(`${server.url}/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${server.credentials?.tenantKey}`,
        "content-type": "application/json",
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  before(async () => {
    engine = await startEngineServer(await EmbeddedInferenceEngine.load(MODEL_DIR), {
      modelId: "toolcall-judge",
      tokenizer: await loadChatTokenizer(MODEL_DIR),
      contextLength: JSON.parse(readFileSync(join(MODEL_DIR, "config.json"), "utf8")).max_position_embeddings,
    });
    home = mkdtempSync(join(tmpdir(), "arc-rubric-fit-"));
    const upstreams = { judges: { baseUrl: engine.baseURL }, mute: { baseUrl: "http://127.0.0.1:9/v1" } };
    server = await startServer(loadServerConfig({}, { home, port: 0, upstreams }));
  });
  after(async () => {
    await server?.close();
    await engine?.close();
    rmSync(home, { recursive: true, force: true });
  });

  it("takes a rubric that leaves room for a verdict, and refuses one that does not, naming the sizes", async () => {
    assert.equal(
      (await api("PUT", "/judges/model", { upstream: "judges", model: "toolcall-judge" })).status,
      200,
    );
    assert.equal((await api("PUT", "/judges/rubric", SHIPPED_RUBRIC)).status, 201);
    const refused = await api("PUT", "/judges/rubric", LONG_RUBRIC);
    assert.equal(refused.status, 400);
    const { error } = await refused.json();
    assert.equal(error.field, "rubric");
    assert.match(
      error.message,
      /^rubric: the judge's prompt with this rubric on a typical conversation takes (\d+) tokens of toolcall-judge's 1024-token context, leaving (\d+) for its 128-token verdict: shorten the rubric by at least (\d+) tokens/,
    );
    const [, prompt, left, shorten] = error.message
      .match(/takes (\d+) .* leaving (\d+) .* at least (\d+)/)
      .map(Number);
    assert.ok(prompt > 1024 - 128, `${prompt} tokens`);
    assert.equal(left, Math.max(0, 1024 - prompt));
    assert.equal(shorten, 128 - (1024 - prompt));
    // nothing was stored: the shipped rubric stays the judge's
    assert.equal((await (await api("GET", "/judges")).json()).rubric.version, 1);

    // the CLI says the same, and fails
    const file = join(home, "long-rubric.json");
    writeFileSync(file, JSON.stringify(LONG_RUBRIC));
    const cli = await runArcCli({ url: server.url, key: server.credentials?.tenantKey as string }, [
      "judges",
      "set",
      file,
    ]);
    assert.notEqual(cli.code, 0);
    assert.match(cli.out, /takes \d+ tokens of toolcall-judge's 1024-token context/);
  });

  it("refuses a judge model whose context cannot hold the tenant's rubric", async () => {
    // an upstream that cannot count tokens (nothing answers its /tokenize) leaves the rubric unchecked
    assert.equal(
      (await api("PUT", "/judges/model", { upstream: "mute", model: "toolcall-judge" })).status,
      200,
    );
    assert.equal((await api("PUT", "/judges/rubric", LONG_RUBRIC)).status, 201);
    // the model that would run it counts, and its context cannot hold it
    const refused = await api("PUT", "/judges/model", { upstream: "judges", model: "toolcall-judge" });
    assert.equal(refused.status, 400);
    assert.match(
      (await refused.json()).error.message,
      /takes \d+ tokens of toolcall-judge's 1024-token context/,
    );
    assert.equal((await (await api("GET", "/judges")).json()).model.upstream, "mute");
  });
});
