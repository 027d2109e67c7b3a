/** Messages between the main thread and the thread that owns PGlite. */
export type PgliteRequest =
  | { id: number; op: "open"; dataDir: string }
  | { id: number; op: "query"; sql: string; params?: unknown[] }
  | { id: number; op: "exec"; sql: string }
  | { id: number; op: "close" };

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

/** The worker's answer to the request with the same `id`: rows, or the Postgres error's fields. */
export type PgliteResponse =
  | { id: number; ok: true; rows?: Record<string, unknown>[] }
  | { id: number; ok: false; error: TransferredError };
