import type { PgliteWasmModules } from "./pglite-wasm-modules.ts";

/**
 * Messages between the main thread and the thread that owns PGlite. The thread answers every request with exactly
 * one response, in the order the requests came, so the main thread pairs them by position: a response that cannot
 * be read (a `messageerror`) still answers the oldest request waiting.
 */
export type PgliteRequest =
  | { op: "open"; dataDir: string; migratedCopy?: string; wasmModules?: PgliteWasmModules }
  | { op: "saveMigratedCopy"; path: string }
  | { op: "query"; sql: string; params?: unknown[] }
  | { op: "exec"; sql: string }
  | { op: "close" };

/** A database error as it crosses threads: PostgreSQL's fields kept, so callers can match on them. */
export interface TransferredError {
  /** The error's message. */
  message: string;
  /** SQLSTATE, e.g. `23505` for a unique violation. */
  code?: string;
  /** PostgreSQL's detail line (which key collided...). */
  detail?: string;
  /** The constraint violated, so a unique violation can be told apart by index. */
  constraint?: string;
}

/**
 * The thread's answer to one request: rows, or the Postgres error's fields. Columns named in `jsonColumns` hold
 * json/jsonb as PostgreSQL's text, parsed on the main thread: a structured clone of a deeply nested value overflows
 * the stack of the thread that reads it, JSON.parse does not.
 */
export type PgliteResponse =
  | { ok: true; rows?: Record<string, unknown>[]; jsonColumns?: string[] }
  | { ok: false; error: TransferredError };
