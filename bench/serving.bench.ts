// Tenants' models as LoRA adapters on one shared base: 32 tenants, each with its production version an adapter of
// models/toolcall-base, served by one `arc engine serve --enable-lora` process behind the Arc gateway (in this process,
// PGlite). Mixed traffic through the official `openai` client: tenants drawn by a Zipf law (a few busy, many quiet),
// a third of the calls streamed, 8 to 32 tokens each, a fixed number of calls in flight. Every answer must be a 200
// from its own tenant's version. Latency is end to end (a stream's last chunk). About a minute on 2 cores.
// Usage: npm run bench:serving [-- --requests 480 --concurrency 8 --max-loras 8]
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { generateToolcallTasks, toolcallFamily } from "@arc/core/families";
import { mulberry32 } from "@arc/engine";
import OpenAI from "openai";
import { loadServerConfig } from "../packages/server/src/config/server-config.ts";
import { writeRandomAdapter } from "../packages/server/src/gateway/__fixtures__/random-adapter.ts";
import { histogramTotals } from "../packages/server/src/metrics/__fixtures__/metric-values.ts";
import { startServer } from "../packages/server/src/serve/start-server.ts";
import { createApiKey } from "../packages/server/src/store/keys.ts";
import { registerModelVersion } from "../packages/server/src/store/model-registry.ts";
import { createTenant } from "../packages/server/src/store/tenants.ts";
import { arcEngineServe } from "./arc-engine-serve.ts";
import { writeBenchResults } from "./results-file.ts";

const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "480" },
    concurrency: { type: "string", default: "8" },
    "max-loras": { type: "string", default: "8" },
  },
});
const REQUESTS = Number(values.requests);
const CONCURRENCY = Number(values.concurrency);
const MAX_LORAS = Number(values["max-loras"]);
const ADAPTERS = 32;
const BASE = resolve("models/toolcall-base");

/** The value below which a share `q` of the sorted `xs` lie (nearest rank). */
const quantile = (xs: number[], q: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
};
const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;

const home = await mkdtemp(join(tmpdir(), "arc-serving-bench-"));
const upstream = await arcEngineServe([
  "--model",
  BASE,
  "--model-id",
  "toolcall-base",
  "--enable-lora",
  "--max-loras",
  String(MAX_LORAS),
]);
const server = await startServer(
  loadServerConfig({
    ARC_HOME: home,
    ARC_PORT: "0",
    ARC_UPSTREAMS: JSON.stringify({ shared: { baseUrl: upstream.url } }),
  }),
  { release: { workers: false } },
);
try {
  const tenants: { client: OpenAI; version: string }[] = [];
  for (let t = 0; t < ADAPTERS; t++) {
    const tenant = await createTenant(server.db, `tenant-${t}`);
    const path = await writeRandomAdapter(BASE, join(home, "artifacts", tenant.id, "adapter"), 1000 + t);
    const version = await registerModelVersion(server.db, tenant.id, {
      name: "prod",
      status: "promoted",
      upstream: {
        name: "shared",
        baseUrl: upstream.url,
        model: "toolcall-base",
        adapter: { base: "toolcall-base", path },
      },
      actor: "bench",
    });
    const { key } = await createApiKey(server.db, { role: "tenant", tenantId: tenant.id });
    tenants.push({
      client: new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key, maxRetries: 0 }),
      version: version.id,
    });
  }
  const prompts = generateToolcallTasks({ split: "eval", seed: 7, count: 64 }).map((task) =>
    toolcallFamily.prompt(task),
  );
  const random = mulberry32(11);
  // Zipf(1) over the tenants: tenant k is asked in proportion to 1 / (k + 1)
  const weights = tenants.map((_, k) => 1 / (k + 1));
  const total = weights.reduce((a, w) => a + w, 0);
  const pickTenant = () => {
    let r = random() * total;
    for (const [k, w] of weights.entries()) {
      r -= w;
      if (r <= 0) return k;
    }
    return tenants.length - 1;
  };
  const plan = Array.from({ length: REQUESTS }, (_, i) => ({
    tenant: i < ADAPTERS ? i : pickTenant(), // every adapter is asked at least once
    stream: random() < 1 / 3,
    maxTokens: [8, 16, 32][Math.floor(random() * 3)],
    messages: prompts[Math.floor(random() * prompts.length)],
  }));
  const latencies: number[] = [];
  const served = new Set<string>();
  const failures: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < plan.length) {
      const call = plan[next++];
      const tenant = tenants[call.tenant];
      const started = performance.now();
      try {
        let version: string | null;
        if (call.stream) {
          const { data, response } = await tenant.client.chat.completions
            .create({ model: "prod", messages: call.messages, max_tokens: call.maxTokens, stream: true })
            .withResponse();
          for await (const _chunk of data);
          version = response.headers.get("x-arc-model-version");
        } else {
          const { response } = await tenant.client.chat.completions
            .create({ model: "prod", messages: call.messages, max_tokens: call.maxTokens })
            .withResponse();
          version = response.headers.get("x-arc-model-version");
        }
        if (version !== tenant.version) failures.push(`tenant ${call.tenant} answered by ${version}`);
        served.add(version ?? "");
        latencies.push(performance.now() - started);
      } catch (error) {
        failures.push(`tenant ${call.tenant}: ${(error as Error).message}`);
      }
    }
  };
  const began = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - began) / 1000;
  const loads = await histogramTotals(server.metrics.modelPool.adapterLoads);
  const figures = {
    adapters_served: served.size,
    p50_ms: round(quantile(latencies, 0.5)),
    p99_ms: round(quantile(latencies, 0.99)),
    requests_per_s: round(latencies.length / seconds, 2),
    adapter_load_ms: round((loads.sum / Math.max(1, loads.count)) * 1000, 2),
    adapter_loads: loads.count,
    requests: REQUESTS,
    failed_requests: failures.length,
    concurrency: CONCURRENCY,
    max_loras: MAX_LORAS,
  };
  console.log(JSON.stringify(figures, null, 2));
  if (failures.length > 0) console.log(`failures (first 5): ${failures.slice(0, 5).join("; ")}`);
  console.log(`wrote ${writeBenchResults("serving", figures)}`);
  if (failures.length > 0) process.exitCode = 1;
} finally {
  await server.close();
  upstream.child.kill("SIGINT");
  await rm(home, { recursive: true, force: true });
}
