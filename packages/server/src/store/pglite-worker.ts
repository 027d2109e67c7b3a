import { parentPort } from "node:worker_threads";
import { PGlite } from "@electric-sql/pglite";
import type { PgliteRequest, PgliteResponse, TransferredError } from "./pglite-worker-protocol.ts";

/** The PGlite thread: runs the embedded PostgreSQL (WASM, synchronous when it runs) off the server's main thread. */
let pglite: PGlite | null = null;

function transferable(error: unknown): TransferredError {
  const e = error as { message?: string; code?: string; detail?: string; constraint?: string };
  return { message: e.message ?? String(error), code: e.code, detail: e.detail, constraint: e.constraint };
}

async function handle(request: PgliteRequest): Promise<PgliteResponse> {
  try {
    if (request.op === "open") {
      pglite = await PGlite.create(request.dataDir);
      return { id: request.id, ok: true };
    }
    if (!pglite) throw new Error("the database is not open");
    if (request.op === "query")
      return {
        id: request.id,
        ok: true,
        rows: (await pglite.query(request.sql, request.params)).rows as Record<string, unknown>[],
      };
    if (request.op === "exec") {
      await pglite.exec(request.sql);
      return { id: request.id, ok: true };
    }
    await pglite.close();
    pglite = null;
    return { id: request.id, ok: true };
  } catch (error) {
    return { id: request.id, ok: false, error: transferable(error) };
  }
}

parentPort?.on("message", async (request: PgliteRequest) => {
  parentPort?.postMessage(await handle(request));
});
