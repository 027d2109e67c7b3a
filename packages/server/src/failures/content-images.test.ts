import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type EvalRow, IMAGE_REF_PREFIX, imageRefs } from "@arc/core";
import { waitUntil } from "@arc/core/testing";
import { tableFromIPC } from "apache-arrow";
import { readParquet } from "parquet-wasm";
import { loadServerConfig } from "../config/server-config.ts";
import { type RunningServer, startServer } from "../serve/start-server.ts";

/** A 1x1 PNG, as an agent inlines an image it shows the model. */
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const DATA_URL = `data:image/png;base64,${PNG}`;

/** A failed toolcall trace whose request shows the image: the model answered in fahrenheit, not celsius. */
function traceWithImage(i: number) {
  const question = `What's the weather in city ${i} in celsius, as on this picture?`;
  return {
    id: `img-${i}`,
    env: "toolcall",
    startedAt: "2026-11-20T10:00:00.000Z",
    input: { question },
    metadata: { solution: { tool: "get_weather", args: { city: `City${i}`, unit: "c" } } },
    steps: [
      {
        id: "llm0",
        kind: "llm",
        startedAt: "2026-11-20T10:00:00.000Z",
        llm: {
          messages: [
            {
              role: "user",
              content: [
                { type: "text", text: question },
                { type: "image_url", image_url: { url: DATA_URL } },
              ],
            },
          ],
          output: { content: JSON.stringify({ tool: "get_weather", args: { city: `City${i}`, unit: "f" } }) },
        },
      },
    ],
  };
}

describe("images in dataset rows", () => {
  let home: string;
  let server: RunningServer;

  const api = async (path: string, init: RequestInit = {}) =>
    fetch(`${server.url}/v1${path}`, {
      ...init,
      headers: {
        authorization: `Bearer ${server.credentials?.tenantKey}`,
        "content-type": "application/json",
      },
    });

  before(async () => {
    home = mkdtempSync(join(tmpdir(), "arc-images-"));
    server = await startServer(loadServerConfig({}, { home, port: 0 }));
  });
  after(async () => {
    await server?.close();
    rmSync(home, { recursive: true, force: true });
  });

  it("are stored once by content hash, referenced by the rows, and inlined again by the chat export", async () => {
    const sent = await api("/traces", {
      method: "POST",
      body: JSON.stringify({ traces: [traceWithImage(1), traceWithImage(2), traceWithImage(3)] }),
    });
    assert.equal(sent.status, 200);
    await waitUntil(async () => {
      const { data } = await (await api("/patterns")).json();
      return data.reduce((n: number, p: { count: number }) => n + p.count, 0) === 3;
    }, "the three traces judged and in patterns");
    const made = await api("/datasets", {
      method: "POST",
      body: JSON.stringify({ kind: "eval", fromPatterns: "all", seed: 1, perPattern: 10, generalSize: 0 }),
    });
    const { id } = await made.json();
    const dataset = await (await api(`/datasets/${id}`)).json();
    const rows = dataset.rows as EvalRow[];
    assert.equal(rows.length, 3);
    assert.ok(!JSON.stringify(rows).includes(PNG), "no row inlines the image");
    const refs = rows.map((r) => imageRefs(r.context?.messages ?? [])[0]);
    assert.ok(refs.every((ref) => ref === refs[0] && ref?.startsWith(IMAGE_REF_PREFIX)));
    const [{ count }] = await server.db.query<{ count: number }>("select count(*)::int as count from images");
    assert.equal(count, 1);

    const chat = await (await api(`/datasets/${id}/export?format=chat`)).text();
    const lines = chat
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.equal(lines.length, 3);
    for (const line of lines) assert.equal(line.messages[0].content[1].image_url.url, DATA_URL);

    // the VERL export carries the stored image itself, in an images column, as VERL's multimodal datasets do
    const parquet = await api(`/datasets/${id}/export?format=verl-parquet`);
    assert.equal(parquet.status, 200);
    const table = tableFromIPC(readParquet(new Uint8Array(await parquet.arrayBuffer())).intoIPCStream());
    const images = table.getChild("images");
    assert.ok(images, "an images column");
    for (let row = 0; row < 3; row++) {
      const [first] = images.get(row).toArray() as { bytes: Uint8Array }[];
      assert.equal(Buffer.from(first.bytes).toString("base64"), PNG);
    }

    const image = await api(`/images/${encodeURIComponent(refs[0] as string)}`);
    assert.equal(image.status, 200);
    assert.equal(image.headers.get("content-type"), "image/png");
    assert.equal(Buffer.from(await image.arrayBuffer()).toString("base64"), PNG);
    assert.equal((await api(`/images/${IMAGE_REF_PREFIX}${"0".repeat(64)}`)).status, 404);
  });
});
