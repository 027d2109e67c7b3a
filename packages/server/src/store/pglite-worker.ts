import { parentPort } from "node:worker_threads";
import { type PGlite, types } from "@electric-sql/pglite";
import pg from "pg";
import { openPgliteCluster, saveMigratedCopy } from "./pglite-cluster.ts";
import type { PgliteRequest, PgliteResponse, TransferredError } from "./pglite-worker-protocol.ts";

/** The PGlite thread: runs the embedded PostgreSQL (WASM, synchronous when it runs) off the server's main thread. */
let pglite: PGlite | null = null;

/** The type ids of PostgreSQL's date, timestamp and timestamptz, and of their arrays. */
const DATE_TIME_TYPES = [types.DATE, types.TIMESTAMP, types.TIMESTAMPTZ, 1182, 1115, 1185];

/**
 * How the PGlite thread reads columns. json and jsonb stay PostgreSQL's text; the main thread parses them (see
 * `PgliteResponse`). Dates and timestamps are read by node-postgres's parsers, so both stores give the same Date:
 * PGlite's own `new Date(text)` reads the years 0001-0099 as 1950-2049 and a BC timestamp as an invalid date.
 */
const parsers = {
  [types.JSON]: (text: string) => text,
  [types.JSONB]: (text: string) => text,
  ...Object.fromEntries(DATE_TIME_TYPES.map((type) => [type, pg.types.getTypeParser(type, "text")])),
};

function transferable(error: unknown): TransferredError {
  const e = error as { message?: string; code?: string; detail?: string; constraint?: string };
  return { message: e.message ?? String(error), code: e.code, detail: e.detail, constraint: e.constraint };
}

async function handle(request: PgliteRequest): Promise<PgliteResponse> {
  try {
    if (request.op === "open") {
      const opened = await openPgliteCluster(request.dataDir, request.migratedCopy, request.wasmModules);
      pglite = opened.pglite;
      return { ok: true, rows: [{ origin: opened.origin }] };
    }
    if (!pglite) throw new Error("the database is not open");
    if (request.op === "saveMigratedCopy") {
      await saveMigratedCopy(pglite, request.path);
      return { ok: true };
    }
    if (request.op === "query") {
      const result = await pglite.query(request.sql, request.params, { parsers });
      const jsonTypeOf = new Map(result.fields.map((f) => [f.name, f.dataTypeID]));
      const jsonColumns = [...jsonTypeOf]
        .filter(([, type]) => type === types.JSON || type === types.JSONB)
        .map(([name]) => name);
      return { ok: true, rows: result.rows as Record<string, unknown>[], jsonColumns };
    }
    if (request.op === "exec") {
      await pglite.exec(request.sql);
      return { ok: true };
    }
    await pglite.close();
    pglite = null;
    return { ok: true };
  } catch (error) {
    return { ok: false, error: transferable(error) };
  }
}

/** Sends a response; one that cannot be cloned is replaced by an error, so the request is still answered. */
function reply(response: PgliteResponse): void {
  try {
    parentPort?.postMessage(response);
  } catch (error) {
    parentPort?.postMessage({
      ok: false,
      error: {
        message: `the database's reply could not be passed to the main thread (${(error as Error).message}): a value in it is probably nested too deeply`,
      },
    } satisfies PgliteResponse);
  }
}

/** Requests are handled one at a time, in arrival order, so responses come in request order. */
let queue: Promise<void> = Promise.resolve();
parentPort?.on("message", (request: PgliteRequest) => {
  queue = queue.then(async () => reply(await handle(request)));
});
parentPort?.on("messageerror", (error: Error) => {
  queue = queue.then(() =>
    reply({
      ok: false,
      error: {
        message: `the database thread could not read the request (${error.message}): a parameter is probably nested too deeply`,
      },
    }),
  );
});
