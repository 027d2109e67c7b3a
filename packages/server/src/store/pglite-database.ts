import { mkdirSync } from "node:fs";
import { Worker } from "node:worker_threads";
import { lockDataDir } from "./data-dir-lock.ts";
import type { Database, Queryable, Row } from "./database.ts";
import type { PgliteRequest, PgliteResponse, TransferredError } from "./pglite-worker-protocol.ts";

/** An error from the embedded database, with PostgreSQL's `code` (e.g. `23505`) as node-postgres gives it. */
export class PgliteQueryError extends Error {
  /** SQLSTATE, e.g. `23505` for a unique violation. */
  readonly code: string | undefined;
  /** PostgreSQL's detail line. */
  readonly detail: string | undefined;
  /** The constraint violated, when one was. */
  readonly constraint: string | undefined;
  constructor(error: TransferredError) {
    super(error.message);
    this.name = "PgliteQueryError";
    this.code = error.code;
    this.detail = error.detail;
    this.constraint = error.constraint;
  }
}

/** A request before it is numbered (Omit distributed over the union). */
type UnnumberedRequest = PgliteRequest extends infer R ? (R extends unknown ? Omit<R, "id"> : never) : never;

/** A FIFO lock: one transaction (or lone statement) at a time on PGlite's single connection. */
class Mutex {
  private tail: Promise<void> = Promise.resolve();
  async run<T>(fn: () => Promise<T>): Promise<T> {
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise((resolve) => {
      release = resolve;
    });
    await previous;
    try {
      return await fn();
    } finally {
      release();
    }
  }
}

/**
 * Opens (creating on first use) the embedded PostgreSQL in `dataDir`, or in memory for `memory://`. PGlite runs in
 * a worker thread: its WASM blocks while it works, and on the main thread that would stall every request.
 */
export async function openPgliteDatabase(dataDir: string): Promise<Database> {
  const inMemory = dataDir.startsWith("memory://");
  if (!inMemory) mkdirSync(dataDir, { recursive: true });
  const unlock = inMemory ? () => {} : lockDataDir(dataDir);
  const worker = new Worker(new URL("./pglite-worker-entry.mjs", import.meta.url));
  const pending = new Map<number, { resolve: (rows: Row[]) => void; reject: (error: Error) => void }>();
  let nextId = 1;
  let failure: Error | null = null;
  worker.unref();
  worker.on("message", (response: PgliteResponse) => {
    const waiter = pending.get(response.id);
    pending.delete(response.id);
    if (pending.size === 0) worker.unref();
    if (!waiter) return;
    if (response.ok) waiter.resolve(response.rows ?? []);
    else waiter.reject(new PgliteQueryError(response.error));
  });
  const failAll = (error: Error) => {
    failure ??= error;
    for (const waiter of pending.values()) waiter.reject(failure);
    pending.clear();
  };
  worker.on("error", failAll);
  worker.on("exit", (code) => failAll(new Error(`the embedded database thread exited (code ${code})`)));
  const send = (request: UnnumberedRequest): Promise<Row[]> => {
    if (failure) return Promise.reject(failure);
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage({ ...request, id });
    });
  };
  try {
    await send({ op: "open", dataDir });
  } catch (error) {
    await worker.terminate();
    unlock();
    throw error;
  }

  const mutex = new Mutex();
  const direct: Queryable = {
    query: async <T extends Row = Row>(sql: string, params?: unknown[]) =>
      (await send({ op: "query", sql, params })) as T[],
    exec: async (sql: string) => {
      await send({ op: "exec", sql });
    },
  };
  return {
    kind: "pglite",
    query: (sql, params) => mutex.run(() => direct.query(sql, params)),
    exec: (sql) => mutex.run(() => direct.exec(sql)),
    transaction: (fn) =>
      mutex.run(async () => {
        await direct.exec("begin");
        try {
          const result = await fn(direct);
          await direct.exec("commit");
          return result;
        } catch (error) {
          await direct.exec("rollback").catch(() => {});
          throw error;
        }
      }),
    async close() {
      await mutex.run(() => send({ op: "close" }));
      await worker.terminate();
      unlock();
    },
  };
}
