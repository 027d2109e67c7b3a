import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { loadServerConfig } from "../config/server-config.ts";
import { type RunningServer, startServer } from "./start-server.ts";

describe("arc serve's /metrics", () => {
  let home: string;
  let server: RunningServer;
  before(async () => {
    home = await mkdtemp(join(tmpdir(), "arc-metrics-"));
    server = await startServer(loadServerConfig({ ARC_GATEWAY_MODEL_POOL_SIZE: "3" }, { home, port: 0 }));
  });
  after(async () => {
    await server?.close();
    await rm(home, { recursive: true, force: true });
  });

  it("shows the gateway's model pool: its bound from ARC_GATEWAY_MODEL_POOL_SIZE and what it holds", async () => {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    assert.match(text, /^# TYPE arc_gateway_models_loaded gauge$/m);
    assert.match(text, /^arc_gateway_models_loaded_max 3$/m);
    assert.match(text, /^# TYPE arc_gateway_model_evictions_total counter$/m);
    assert.match(text, /^# TYPE arc_gateway_adapter_load_seconds histogram$/m);
  });
});
