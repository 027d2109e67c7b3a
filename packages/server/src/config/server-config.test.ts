import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InvalidInputError } from "@arc/core";
import { loadServerConfig } from "./server-config.ts";

describe("loadServerConfig", () => {
  it("reads the admin's upstream allowlist and shipped models folder from ARC_UPSTREAMS and ARC_MODELS_DIR", () => {
    const config = loadServerConfig({
      ARC_UPSTREAMS: '{"vllm": {"baseUrl": "http://vllm:8000/v1", "apiKeyEnv": "VLLM_API_KEY"}}',
      ARC_MODELS_DIR: "/opt/arc/models",
    });
    assert.deepEqual(config.upstreams, {
      vllm: { baseUrl: "http://vllm:8000/v1", apiKeyEnv: "VLLM_API_KEY" },
    });
    assert.equal(config.modelsDir, "/opt/arc/models");
    assert.deepEqual(loadServerConfig({}).upstreams, {});
  });

  it("names the variable and the upstream when ARC_UPSTREAMS is not valid", () => {
    assert.throws(
      () => loadServerConfig({ ARC_UPSTREAMS: "{vllm" }),
      /config upstreams \(ARC_UPSTREAMS\): expected JSON/,
    );
    assert.throws(
      () => loadServerConfig({ ARC_UPSTREAMS: '{"vllm": {"baseUrl": "not a url"}}' }),
      /config upstreams \(ARC_UPSTREAMS or --upstreams\) at vllm\.baseUrl: Invalid url/,
    );
    assert.throws(
      () => loadServerConfig({ ARC_UPSTREAMS: '{"vllm": {"baseUrl": "http://x/v1", "apiKeyEnv": "$(id)"}}' }),
      /at vllm\.apiKeyEnv: expected an environment variable name/,
    );
  });

  it("rejects a bad ARC_PORT with an InvalidInputError naming the variable and the flag (the CLI prints it, exit 2)", () => {
    assert.throws(
      () => loadServerConfig({ ARC_PORT: "http" }),
      (error: unknown) =>
        error instanceof InvalidInputError &&
        error.field === "port" &&
        error.message === "config port (ARC_PORT or --port): Expected number, received nan",
    );
    assert.equal(
      loadServerConfig({ ARC_PORT: "8080" }, { port: 0 }).port,
      0,
      "a flag overrides the variable",
    );
  });
});
