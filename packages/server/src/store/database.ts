/** A row as returned by a query: column name → value. */
export type Row = Record<string, unknown>;

/** What a store needs from PostgreSQL; implemented over PGlite (embedded) and node-postgres (server). */
export interface Queryable {
  /** One parameterized statement (`$1`, `$2`...); rows with columns as PostgreSQL names them. */
  query<T extends Row = Row>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Runs several `;`-separated statements that take no parameters (migrations). */
  exec(sql: string): Promise<void>;
}

/** A PostgreSQL database: the embedded one under ARC_HOME, or a server named by DATABASE_URL. */
export interface Database extends Queryable {
  /** `pglite` or `postgres`: which engine answers. */
  readonly kind: "pglite" | "postgres";
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Ends every connection (and the PGlite worker); the database cannot be used after. */
  close(): Promise<void>;
}
