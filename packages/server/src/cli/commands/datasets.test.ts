import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { simulateProductionTraffic, waitUntil } from "@arc/core/testing";
import { loadServerConfig } from "../../config/server-config.ts";
import { type RunningServer, startServer } from "../../serve/start-server.ts";
import { main } from "../main.ts";

/** Runs `arc <argv>` in this process and returns its exit code and what it printed. */
async function arc(argv: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const log = console.log;
  const error = console.error;
  console.log = (...parts: unknown[]) => lines.push(parts.join(" "));
  console.error = console.log;
  try {
    return { code: await main(argv), out: lines.join("\n") };
  } finally {
    console.log = log;
    console.error = error;
  }
}

describe("arc patterns and arc datasets", () => {
  let home: string;
  let server: RunningServer;
  let auth: string[];

  before(async () => {
    home = mkdtempSync(join(tmpdir(), "arc-cli-datasets-"));
    server = await startServer(loadServerConfig({}, { home, port: 0 }), {
      failures: { config: { quietMs: 0, pollMs: 20 } },
    });
    const key = server.credentials?.tenantKey as string;
    auth = ["--url", server.url, "--key", key];
    const traffic = simulateProductionTraffic({ seed: 5, count: 400 });
    const res = await fetch(`${server.url}/v1/traces`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ traces: traffic.map((s) => s.trace) }),
    });
    assert.equal(res.status, 200);
    await waitUntil(
      async () => {
        const { out } = await arc(["patterns", "ls", ...auth, "--json"]);
        const page = JSON.parse(out);
        const judged = Object.values(page.verdicts as Record<string, number>).reduce((a, b) => a + b, 0);
        return page.pending === 0 && judged === 400;
      },
      "all 400 traces to be judged",
      { timeoutMs: 60_000, intervalMs: 100 },
    );
  });
  after(async () => {
    await server?.close();
    rmSync(home, { recursive: true, force: true });
  });

  it("explains each command and its options in --help", async () => {
    const patterns = await arc(["patterns", "--help"]);
    assert.equal(patterns.code, 0);
    assert.match(patterns.out, /arc patterns ls/);
    assert.match(patterns.out, /arc patterns show <pattern-id>/);
    const datasets = await arc(["datasets", "--help"]);
    assert.match(datasets.out, /--from-patterns/);
    assert.match(datasets.out, /--format jsonl\|chat\|preferences\|verl-parquet --out <file>/);
  });

  it("lists patterns with counts and labels, and shows one with its examples", async () => {
    const ls = await arc(["patterns", "ls", ...auth]);
    assert.equal(ls.code, 0);
    assert.match(ls.out, /^ID\s+COUNT\s+LABEL/);
    assert.match(ls.out, /traces judged: .*; waiting to be judged: 0$/);
    const id = ls.out.split("\n")[1].split(/\s+/)[0];
    assert.match(id, /^pat_/);
    const show = await arc(["patterns", "show", id, ...auth]);
    assert.equal(show.code, 0);
    assert.match(show.out, new RegExp(`^pattern ${id} `));
    assert.match(show.out, /examples:\n- trace tr-5-/);
    assert.equal((await arc(["patterns", "show", "pat_missing", ...auth])).code, 2);
  });

  it("creates a prompt pool from all patterns, lists, shows and exports it to VERL parquet", async () => {
    const created = await arc([
      "datasets",
      "create",
      "--kind",
      "prompts",
      "--from-patterns",
      "all",
      "--size",
      "30",
      "--seed",
      "4",
      ...auth,
    ]);
    assert.equal(created.code, 0, created.out);
    assert.match(created.out, /^created\ndataset ds_[0-9a-f]{16} {2}kind=prompts {2}rows=30/);
    const id = (created.out.match(/dataset (ds_[0-9a-f]+)/) as RegExpMatchArray)[1];
    const again = await arc([
      "datasets",
      "create",
      "--kind",
      "prompts",
      "--size",
      "30",
      "--seed",
      "4",
      ...auth,
    ]);
    assert.match(again.out, /^unchanged/);
    const ls = await arc(["datasets", "ls", ...auth]);
    assert.match(ls.out, new RegExp(`${id}\\s+prompts\\s+30`));
    const show = await arc(["datasets", "show", id, "--rows", "2", ...auth]);
    assert.match(show.out, /\(28 more rows/);
    const out = join(home, "pool.parquet");
    const exported = await arc(["datasets", "export", id, "--format", "verl-parquet", "--out", out, ...auth]);
    assert.equal(exported.code, 0, exported.out);
    const bytes = readFileSync(out);
    assert.equal(bytes.subarray(0, 4).toString(), "PAR1");
    assert.equal(bytes.subarray(-4).toString(), "PAR1");
  });

  it("answers a wrong kind, pattern or format with exit code 2 and the reason", async () => {
    const kind = await arc(["datasets", "create", "--kind", "sft", ...auth]);
    assert.equal(kind.code, 2);
    assert.match(kind.out, /kind/);
    const pattern = await arc([
      "datasets",
      "create",
      "--kind",
      "eval",
      "--from-patterns",
      "pat_nope",
      ...auth,
    ]);
    assert.match(pattern.out, /no pattern with id "pat_nope"/);
    const [line] = (await arc(["datasets", "ls", "--kind", "prompts", ...auth])).out.split("\n").slice(1);
    const format = await arc([
      "datasets",
      "export",
      line.split(/\s+/)[0],
      "--format",
      "preferences",
      "--out",
      join(home, "x"),
      ...auth,
    ]);
    assert.equal(format.code, 2);
    assert.match(format.out, /expected one of jsonl, chat, verl-parquet/);
    assert.equal((await arc(["datasets", "export", "ds_x", ...auth])).code, 2);
  });
});
