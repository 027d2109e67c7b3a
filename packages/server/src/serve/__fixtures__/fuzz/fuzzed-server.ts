/**
 * The hostile-input fixture server as a child process (a case that wedges, crashes or pollutes it cannot take the
 * test runner with it): IPC calls with deadlines, its stderr kept for diagnosis, restarts; and plain HTTP exchanges.
 */
import { type ChildProcess, fork } from "node:child_process";
import { type IncomingHttpHeaders, request } from "node:http";
import { fileURLToPath } from "node:url";
import { openPostgresDatabase } from "../../../store/postgres-database.ts";
import type { HostileServerIds, HostileServerReady, HostileServerState } from "../hostile-input-server.ts";

/** A case not answered within this is a hang. */
export const ANSWER_MS = 10_000;
const HEALTH_MS = 5_000;

/** A failure after which the server cannot be trusted: it is restarted and the route's remaining cases skipped. */
export class Fatal extends Error {}

/** A Fatal failure before a case's request was sent: the case did not execute. */
export class NotSent extends Fatal {}

/** The fixture server as a child process: IPC calls with deadlines, its stderr kept for diagnosis, restarts. */
export class FuzzedServer {
  ready!: HostileServerReady;
  restarts = 0;
  /**
   * The state the last case left, standing for the next case's state before (nothing else writes between cases:
   * the fixture's background loops are off); dropped when something may have written since.
   */
  lastState: HostileServerState | undefined;
  /** The fuzzed tenant's ids, until a write may have changed them. */
  private ids: HostileServerIds | undefined;
  private child: ChildProcess | undefined;
  private log = "";
  private logStart = 0;
  private next = 1;
  private readonly pending = new Map<
    number,
    (reply: { ok: boolean; result?: unknown; error?: string }) => void
  >();

  constructor(private readonly database: string) {}

  async start(): Promise<void> {
    const child = fork(
      fileURLToPath(new URL("../hostile-input-server.ts", import.meta.url)),
      [this.database],
      { execArgv: ["--import", "tsx"], stdio: ["ignore", "ignore", "pipe", "ipc"] },
    );
    this.child = child;
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => {
      this.log += chunk;
      if (this.log.length > 2_000_000) {
        this.logStart += this.log.length - 1_000_000;
        this.log = this.log.slice(-1_000_000);
      }
    });
    child.on("exit", () => {
      for (const reply of this.pending.values()) reply({ ok: false, error: "the server process exited" });
      this.pending.clear();
    });
    this.ready = await new Promise<HostileServerReady>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the server did not start: ${this.log}`)), 120_000);
      child.on("message", (m: { ready?: HostileServerReady; id?: number }) => {
        if (m.ready) {
          clearTimeout(timer);
          resolve(m.ready);
        } else if (m.id !== undefined) {
          this.pending.get(m.id)?.(m as { ok: boolean });
          this.pending.delete(m.id);
        }
      });
      child.once("exit", (code) =>
        reject(new Error(`the server exited (${code}) before listening: ${this.log}`)),
      );
    });
  }

  get alive(): boolean {
    return this.child?.exitCode === null && this.child.signalCode === null;
  }

  /** Runs an op of the fixture; a reply missing past `ms` is fatal (the database is wedged). */
  call<T>(op: string, ms = ANSWER_MS, args: Record<string, unknown> = {}): Promise<T> {
    const id = this.next++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(
          new Fatal(
            `the server's "${op}" got no reply within ${ms} ms: the server is stalled or its database wedged`,
          ),
        );
      }, ms);
      this.pending.set(id, (reply) => {
        clearTimeout(timer);
        if (reply.ok) resolve(reply.result as T);
        else reject(new Fatal(`the server's "${op}" failed: ${reply.error}`));
      });
      if (!this.child?.send({ id, op, ...args })) {
        clearTimeout(timer);
        this.pending.delete(id);
        reject(new Fatal("the server process is gone"));
      }
    });
  }

  /** Where its log stands now. */
  mark(): number {
    return this.logStart + this.log.length;
  }

  /** The first lines of each error it logged since `mark` (stack frames left out). */
  errorsSince(mark: number): string {
    const lines = this.log
      .slice(Math.max(0, mark - this.logStart))
      .split("\n")
      .filter((l) => l.trim() && !/^\s+at /.test(l) && !/^\s*[{}]\s*$/.test(l));
    return lines
      .slice(0, 4)
      .map((l) => l.trim().slice(0, 240))
      .join(" | ");
  }

  /** Closes it, or kills it if it cannot close (a killed server's PostgreSQL schema is dropped from here). */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || !this.alive) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    const closed = await this.call("close", 10_000).then(
      () => true,
      () => false,
    );
    if (!closed) child.kill("SIGKILL");
    await exited;
    if (!closed) await this.dropSchema();
  }

  async restart(): Promise<void> {
    this.restarts++;
    const child = this.child;
    if (child && this.alive) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
      await this.dropSchema();
    }
    this.pending.clear();
    this.lastState = undefined;
    this.ids = undefined;
    await this.start();
  }

  /** The fuzzed tenant's ids of things that exist, read again after `idsChanged`. */
  async currentIds(): Promise<HostileServerIds> {
    this.ids ??= await this.call<HostileServerIds>("ids");
    return this.ids;
  }

  /** Something was written: ids are read again before the next case. */
  idsChanged(): void {
    this.ids = undefined;
  }

  private async dropSchema(): Promise<void> {
    const url = process.env.ARC_TEST_DATABASE_URL;
    if (!this.ready.schema || !url) return;
    const admin = await openPostgresDatabase(url, { maxConnections: 1 });
    await admin.query(`drop schema if exists ${this.ready.schema} cascade`).finally(() => admin.close());
  }
}

/** An HTTP exchange on a connection of its own (so no keep-alive reuse can be blamed), the body read whole. */
export function answerOf(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: Uint8Array },
  ms: number,
): Promise<{ status: number; text: string; headers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const headers = { ...init.headers, "content-length": String(init.body?.byteLength ?? 0) };
    const req = request(url, { method: init.method ?? "GET", headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          text: Buffer.concat(chunks).toString("utf8"),
          headers: res.headers,
        }),
      );
      res.on("error", reject);
    });
    const timer = setTimeout(() => {
      const timeout = new Error(`no answer within ${ms} ms`);
      timeout.name = "TimeoutError";
      req.destroy(timeout);
    }, ms);
    req.on("error", reject);
    req.on("close", () => clearTimeout(timer));
    req.end(init.body);
  });
}

export async function healthy(server: FuzzedServer): Promise<string | null> {
  try {
    const { status, text } = await answerOf(`${server.ready.url}/health`, {}, HEALTH_MS);
    return status === 200 ? null : `/health answered ${status} ${text.slice(0, 200)}`;
  } catch (error) {
    return `/health got no answer: ${(error as Error).message}`;
  }
}
