import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, open, readFile, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { torchPython } from "../../torch/index.ts";

/** The `ray` command of the project's venv. */
export const RAY_CLI = join(dirname(torchPython()), "ray");

/** A TCP port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A local Ray head of this test alone: its GCS address, its dashboard (Jobs API), and a stop of it alone. */
export interface LocalRayHead {
  address: string;
  dashboardUrl: string;
  stop(): Promise<void>;
}

/** How many times a head that exits before its dashboard answers is started again, on fresh ports. */
const START_ATTEMPTS = 3;

/**
 * Starts a Ray head in the foreground (`ray start --head --block`) in a process group of its own, every port its
 * own, token authentication off, so that tests beside it (and their heads) are untouched: `stop` ends this head and
 * its group only, where `ray stop` would end every Ray process of the machine. Resolves once the dashboard answers.
 * A free port can be taken by another process before Ray binds it (another test's head picks nine at once), so a
 * head that exits early is started again on fresh ports; the last attempt's log is in the error.
 */
export async function startLocalRayHead(options: { cpus?: number } = {}): Promise<LocalRayHead> {
  let failure = "";
  for (let attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
    const started = await startHeadOnce(options.cpus ?? 2);
    if ("head" in started) return started.head;
    failure = started.failure;
    if (!started.exitedEarly) break;
  }
  throw new Error(failure);
}

/** One start of a head: the head once its dashboard answers, or why not and the tail of its log. */
async function startHeadOnce(
  cpus: number,
): Promise<{ head: LocalRayHead } | { failure: string; exitedEarly: boolean }> {
  const temp = await mkdtemp(join(tmpdir(), "arc-ray-"));
  const logPath = join(temp, "head.log");
  const log = await open(logPath, "w");
  const [gcs, dashboard, ...ports] = await Promise.all(Array.from({ length: 9 }, freePort));
  const [agentHttp, agentGrpc, metrics, client, runtimeEnv, nodeManager, objectManager] = ports;
  const minWorker = 20_000 + Math.floor(Math.random() * 20_000);
  const head: ChildProcess = spawn(
    RAY_CLI,
    [
      "start",
      "--head",
      "--block",
      `--port=${gcs}`,
      "--node-ip-address=127.0.0.1",
      `--num-cpus=${cpus}`,
      "--num-gpus=0",
      "--include-dashboard=true",
      "--dashboard-host=127.0.0.1",
      `--dashboard-port=${dashboard}`,
      `--dashboard-agent-listen-port=${agentHttp}`,
      `--dashboard-agent-grpc-port=${agentGrpc}`,
      `--metrics-export-port=${metrics}`,
      `--ray-client-server-port=${client}`,
      `--runtime-env-agent-port=${runtimeEnv}`,
      `--node-manager-port=${nodeManager}`,
      `--object-manager-port=${objectManager}`,
      `--min-worker-port=${minWorker}`,
      `--max-worker-port=${minWorker + 200}`,
      "--disable-usage-stats",
      `--temp-dir=${temp}`,
    ],
    { detached: true, stdio: ["ignore", log.fd, log.fd], env: { ...process.env, RAY_AUTH_MODE: "disabled" } },
  );
  await log.close();
  const exited = new Promise<void>((resolve) => head.once("exit", () => resolve()));
  // SIGTERM to the head alone: it stops its own processes in about 2 s, where SIGTERM to its whole group makes each
  // of them shut down on its own for about 30 s; then SIGKILL to whatever of the group is left
  const stop = async () => {
    const pid = head.pid as number;
    for (const [target, signal] of [
      [pid, "SIGTERM"],
      [-pid, "SIGKILL"],
    ] as const) {
      try {
        process.kill(target, signal);
      } catch {
        break;
      }
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    }
    await rm(temp, { recursive: true, force: true });
  };
  const dashboardUrl = `http://127.0.0.1:${dashboard}`;
  const started = Date.now();
  while (Date.now() - started < 120_000) {
    if (head.exitCode !== null) break;
    const up = await fetch(`${dashboardUrl}/api/version`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) return { head: { address: `127.0.0.1:${gcs}`, dashboardUrl, stop } };
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const exitCode = head.exitCode;
  const tail = (await readFile(logPath, "utf8").catch(() => "")).trim().split("\n").slice(-20).join("\n");
  await stop();
  const why =
    exitCode === null ? "its dashboard did not answer within 120 s" : `it exited with code ${exitCode}`;
  return {
    failure: `ray start --head did not bring up its dashboard: ${why}. The end of its log:\n${tail}`,
    exitedEarly: exitCode !== null,
  };
}
