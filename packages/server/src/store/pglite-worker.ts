import { parentPort } from "node:worker_threads";
import { type PGlite, types } from "@electric-sql/pglite";
import { openPgliteCluster } from "./pglite-cluster.ts";
import type { PgliteRequest, PgliteResponse, TransferredError } from "./pglite-worker-protocol.ts";

/** The PGlite thread: runs the embedded PostgreSQL (WASM, synchronous when it runs) off the server's main thread. */
let pglite: PGlite | null = null;

/** json and jsonb columns stay PostgreSQL's text here; the main thread parses them (see `PgliteResponse`). */
const keepJsonText = { [types.JSON]: (text: string) => text, [types.JSONB]: (text: string) => text };

function transferable(error: unknown): TransferredError {
  const e = error as { message?: string; code?: string; detail?: string; constraint?: string };
  return { message: e.message ?? String(error), code: e.code, detail: e.detail, constraint: e.constraint };
}

async function handle(request: PgliteRequest): Promise<PgliteResponse> {
  try {
    if (request.op === "open") {
      pglite = await openPgliteCluster(request.dataDir);
      return { ok: true };
    }
    if (!pglite) throw new Error("the database is not open");
    if (request.op === "query") {
      const result = await pglite.query(request.sql, request.params, { parsers: keepJsonText });
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
