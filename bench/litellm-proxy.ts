// LiteLLM's proxy (from PyPI, installed into the project's venv on first use) in front of a given OpenAI-compatible
// upstream, for the gateway benchmark's side-by-side figures. One worker, its default; a master key, so that it
// checks a key per call as Arc's gateway does; no database, so it records no spend logs (Arc records every call).
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const venvBin = join(".venv", "bin");
const requirements = join("bench", "litellm-requirements.txt");

/** A running proxy: its `/v1` URL and key. */
export interface LiteLlmProxy {
  url: string;
  key: string;
  version: string;
  close(): Promise<void>;
}

/** The pinned version in bench/litellm-requirements.txt. */
function pinnedVersion(): string {
  const pin = /litellm\[proxy\]==(\S+)/.exec(readFileSync(requirements, "utf8"));
  if (!pin) throw new Error(`${requirements}: expected a line litellm[proxy]==<version>`);
  return pin[1];
}

/** Installs the pinned LiteLLM into .venv unless it is there; returns why it cannot, or null when ready. */
function ensureInstalled(version: string): string | null {
  const env = spawnSync(process.execPath, ["scripts/python-env.mjs"], { stdio: "inherit" });
  if (env.status !== 0 || !existsSync(join(venvBin, "python")))
    return "the project's Python venv is not available";
  const installed = spawnSync(
    join(venvBin, "python"),
    ["-c", "import litellm, importlib.metadata as m; print(m.version('litellm'))"],
    {
      encoding: "utf8",
    },
  );
  if (installed.status === 0 && installed.stdout.trim() === version && existsSync(join(venvBin, "litellm")))
    return null;
  console.log(`bench:gateway: installing ${requirements} into .venv`);
  const pip = spawnSync(
    join(venvBin, "python"),
    ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r", requirements],
    { stdio: "inherit" },
  );
  return pip.status === 0 ? null : `pip install -r ${requirements} failed (exit ${pip.status})`;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** The environment less any database URL: LiteLLM would take it for its own spend logs. */
function withoutDatabase(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { DATABASE_URL: _, ...rest } = env;
  return rest;
}

/** Starts the proxy in front of `upstreamUrl` (a `/v1` URL serving `bench-model`); null, said why, when it cannot. */
export async function startLiteLlmProxy(upstreamUrl: string): Promise<LiteLlmProxy | null> {
  const version = pinnedVersion();
  const missing = ensureInstalled(version);
  if (missing) {
    console.log(`bench:gateway: LiteLLM not measured (${missing})`);
    return null;
  }
  const dir = mkdtempSync(join(tmpdir(), "arc-litellm-"));
  const key = "sk-bench-litellm";
  writeFileSync(
    join(dir, "config.yaml"),
    [
      "model_list:",
      "  - model_name: bench-model",
      "    litellm_params:",
      "      model: openai/bench-model",
      `      api_base: ${upstreamUrl}`,
      "      api_key: none",
      "general_settings:",
      `  master_key: ${key}`,
      "",
    ].join("\n"),
  );
  const port = await freePort();
  const child: ChildProcess = spawn(
    join(process.cwd(), venvBin, "litellm"),
    ["--config", "config.yaml", "--port", String(port), "--host", "127.0.0.1"],
    {
      cwd: dir,
      stdio: ["ignore", "ignore", "pipe"],
      env: withoutDatabase({ ...process.env, LITELLM_LOG: "ERROR", LITELLM_LOCAL_MODEL_COST_MAP: "True" }),
    },
  );
  let stderr = "";
  child.stderr?.on("data", (d) => {
    stderr = (stderr + d).slice(-4000);
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  while (true) {
    if (child.exitCode !== null) throw new Error(`LiteLLM's proxy exited with ${child.exitCode}: ${stderr}`);
    const ready = await fetch(`${url}/health/liveliness`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`LiteLLM's proxy did not answer /health/liveliness within 120 s: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  return {
    url: `${url}/v1`,
    key,
    version,
    async close() {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
