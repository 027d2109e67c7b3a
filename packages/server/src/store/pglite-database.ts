import { mkdirSync } from "node:fs";
import { Worker } from "node:worker_threads";
import { lockDataDir } from "./data-dir-lock.ts";
import type { Database, Queryable, Row } from "./database.ts";
import type { ClusterOrigin } from "./pglite-cluster.ts";
import { pgliteWasmModules } from "./pglite-wasm-modules.ts";
import type { PgliteRequest, PgliteResponse, TransferredError } from "./pglite-worker-protocol.ts";

/** How long the embedded database may take over one statement, unless `queryTimeoutMs` says otherwise. */
export const DEFAULT_QUERY_TIMEOUT_MS = 30_000;

/** How the embedded database runs. */
export interface PgliteOptions {
  /**
   * How long one statement (or closing) may take before its caller gets an error and the lock passes on; until
   * the late statement ends, other statements fail at once rather than queue behind it. Opening is not bounded.
   */
  queryTimeoutMs?: number;
  /** A saved migrated cluster a new cluster starts from, when there is one (see `openMigratedPglite`). */
  migratedCopy?: string;
}

/** The embedded database: a `Database`, with where its cluster came from and a way to keep it for later ones. */
export interface PgliteDatabase extends Database {
  /** Where the cluster came from when it opened. */
  readonly origin: ClusterOrigin;
  /** Keeps the cluster as it is now as the migrated copy at `path` (see `saveMigratedCopy`); best effort. */
  saveMigratedCopy(path: string): Promise<void>;
}

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

/** A request sent to the PGlite thread, waiting for its response. */
interface Waiter {
  /** What was asked, for error messages. */
  what: string;
  resolve(rows: Row[]): void;
  reject(error: Error): void;
  timer?: NodeJS.Timeout;
  /** Its deadline passed: the caller has its error, and the response, when it comes, is dropped. */
  expired: boolean;
}

/** What a request is, for error messages: the op, and the start of its SQL. */
function describeRequest(request: PgliteRequest): string {
  if (request.op !== "query" && request.op !== "exec") return request.op;
  const sql = request.sql.replace(/\s+/g, " ").trim();
  return `the statement "${sql.length > 80 ? `${sql.slice(0, 80)}...` : sql}"`;
}

/** The rows of a response, its json columns parsed. */
function rowsOf(response: PgliteResponse & { ok: true }): Row[] {
  const rows = response.rows ?? [];
  for (const column of response.jsonColumns ?? []) {
    for (const row of rows) {
      const text = row[column];
      if (typeof text === "string") row[column] = JSON.parse(text);
    }
  }
  return rows;
}

/** Settles with `promise` or after `ms`, whichever comes first: null, or the error (its own or the deadline's). */
async function settleWithin(promise: Promise<unknown>, ms: number, late: string): Promise<Error | null> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<Error>((resolve) => {
    timer = setTimeout(() => resolve(new Error(late)), ms);
  });
  try {
    return await Promise.race([
      promise.then(
        () => null,
        (error: Error) => error,
      ),
      deadline,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Requests to the PGlite thread, each answered once: its rows, its error, or the deadline's or the thread's error. */
interface WorkerChannel {
  /**
   * Sends one request. Unless `bounded` is false its caller gets an error after the deadline; while a request is past
   * its deadline, others fail at once, except with `evenIfLate` (a rollback that must follow the late statement).
   */
  send(request: PgliteRequest, options?: { bounded?: boolean; evenIfLate?: boolean }): Promise<Row[]>;
  /** Refuses every later request with `error` (the first reason given stays). */
  refuse(error: Error): void;
}

/**
 * The channel to a PGlite worker thread: the thread answers requests in order, so each response settles the oldest
 * waiting request; a reply that cannot be read, the thread's death and a passed deadline each settle it with an error.
 */
function workerChannel(worker: Worker, timeoutMs: number): WorkerChannel {
  /** Requests sent, oldest first; the thread answers them in order, so each response belongs to the first. */
  const waiting: Waiter[] = [];
  /** Why the thread can take no more requests (it died, or the database was closed). */
  let failure: Error | null = null;
  worker.unref();
  const answer = (settle: (waiter: Waiter) => void) => {
    const waiter = waiting.shift();
    if (waiting.length === 0) worker.unref();
    if (!waiter) return;
    clearTimeout(waiter.timer);
    if (!waiter.expired) settle(waiter);
  };
  worker.on("message", (response: PgliteResponse) =>
    answer((waiter) => {
      if (!response.ok) return waiter.reject(new PgliteQueryError(response.error));
      try {
        waiter.resolve(rowsOf(response));
      } catch (error) {
        waiter.reject(error as Error);
      }
    }),
  );
  worker.on("messageerror", (error: Error) =>
    answer((waiter) =>
      waiter.reject(
        new Error(
          `the embedded database answered ${waiter.what}, but its reply could not be read on the main thread (${error.message}): a value in it is probably nested too deeply`,
        ),
      ),
    ),
  );
  const failAll = (error: Error) => {
    failure ??= error;
    for (const waiter of waiting.splice(0)) {
      clearTimeout(waiter.timer);
      if (!waiter.expired) waiter.reject(failure);
    }
    worker.unref();
  };
  worker.on("error", (error) => failAll(new Error(`the embedded database thread failed: ${error.message}`)));
  worker.on("exit", (code) => failAll(new Error(`the embedded database thread exited (code ${code})`)));

  const send = (request: PgliteRequest, { bounded = true, evenIfLate = false } = {}): Promise<Row[]> => {
    if (failure) return Promise.reject(failure);
    const late = waiting.find((w) => w.expired);
    if (late && !evenIfLate) {
      return Promise.reject(
        new Error(
          `the embedded database is busy: ${late.what} has run past its ${timeoutMs} ms deadline and has not ended yet`,
        ),
      );
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { what: describeRequest(request), resolve, reject, expired: false };
      try {
        worker.postMessage(request);
      } catch (error) {
        reject(
          new Error(
            `${waiter.what} could not be sent to the embedded database (${(error as Error).message}): a parameter is probably nested too deeply`,
          ),
        );
        return;
      }
      waiting.push(waiter);
      worker.ref();
      if (!bounded) return;
      waiter.timer = setTimeout(() => {
        waiter.expired = true;
        reject(
          new Error(
            `the embedded database did not answer ${waiter.what} within ${timeoutMs} ms (it may still complete)`,
          ),
        );
      }, timeoutMs);
    });
  };
  return {
    send,
    refuse(error) {
      failure ??= error;
    },
  };
}

/**
 * Opens (creating on first use) the embedded PostgreSQL in `dataDir`, or in memory for `memory://`. PGlite runs in
 * a worker thread: its WASM blocks while it works, and on the main thread that would stall every request. Every
 * request gets an answer: its rows, its error, or an error when the reply cannot be read, the thread dies, or the
 * statement passes its deadline (`queryTimeoutMs`).
 */
export async function openPgliteDatabase(
  dataDir: string,
  options: PgliteOptions = {},
): Promise<PgliteDatabase> {
  const timeoutMs = options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
  const inMemory = dataDir.startsWith("memory://");
  if (!inMemory) mkdirSync(dataDir, { recursive: true });
  const unlock = inMemory ? () => {} : lockDataDir(dataDir);
  const worker = new Worker(new URL("./pglite-worker-entry.mjs", import.meta.url));
  const { send, refuse } = workerChannel(worker, timeoutMs);
  let origin: ClusterOrigin;
  try {
    const wasmModules = await pgliteWasmModules();
    const [opened] = await send(
      { op: "open", dataDir, migratedCopy: options.migratedCopy, wasmModules },
      { bounded: false },
    );
    origin = opened.origin as ClusterOrigin;
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
  let closing: Promise<void> | undefined;
  const close = async () => {
    const closed = mutex.run(() => {
      const request = send({ op: "close" }, { bounded: false });
      refuse(new Error("the embedded database is closed"));
      return request;
    });
    const unclean = await settleWithin(
      closed,
      timeoutMs,
      `closing waited ${timeoutMs} ms for the transaction or statement under way`,
    );
    refuse(new Error("the embedded database is closed"));
    await worker.terminate();
    unlock();
    if (unclean) {
      throw new Error(
        `the embedded database did not close cleanly (${unclean.message}); its thread was stopped, and what was committed is kept`,
      );
    }
  };
  return {
    kind: "pglite",
    origin,
    saveMigratedCopy: (path) =>
      mutex.run(async () => void (await send({ op: "saveMigratedCopy", path }, { bounded: false }))),
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
          await send({ op: "exec", sql: "rollback" }, { evenIfLate: true }).catch(() => {});
          throw error;
        }
      }),
    close() {
      closing ??= close();
      return closing;
    },
  };
}
