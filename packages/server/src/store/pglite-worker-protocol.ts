/** Messages between the main thread and the thread that owns PGlite. */
export type PgliteRequest =
  | { id: number; op: "open"; dataDir: string }
  | { id: number; op: "query"; sql: string; params?: unknown[] }
  | { id: number; op: "exec"; sql: string }
  | { id: number; op: "close" };

/** A database error as it crosses threads: PostgreSQL's fields kept, so callers can match on them. */
export interface TransferredError {
  message: string;
  code?: string;
  detail?: string;
  constraint?: string;
}

export type PgliteResponse =
  | { id: number; ok: true; rows?: Record<string, unknown>[] }
  | { id: number; ok: false; error: TransferredError };
