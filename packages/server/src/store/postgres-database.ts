import pg from "pg";
import type { Database, Queryable, Row } from "./database.ts";

/** Connects to a PostgreSQL server with a pool of `maxConnections`; `schema` puts every table in that schema. */
export async function openPostgresDatabase(
  url: string,
  options: { maxConnections?: number; schema?: string } = {},
): Promise<Database> {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.maxConnections ?? 10,
    options: options.schema ? `-c search_path=${options.schema}` : undefined,
  });
  pool.on("error", () => {
    // An idle client lost its connection; the pool replaces it on next use.
  });
  await pool.query("select 1");
  const query = async <T extends Row = Row>(
    client: pg.Pool | pg.PoolClient,
    sql: string,
    params?: unknown[],
  ) => (await client.query(sql, params)).rows as T[];
  return {
    kind: "postgres",
    query: (sql, params) => query(pool, sql, params),
    exec: async (sql) => {
      await pool.query(sql);
    },
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query("begin");
        const tx: Queryable = {
          query: (sql, params) => query(client, sql, params),
          exec: async (sql) => {
            await client.query(sql);
          },
        };
        const result = await fn(tx);
        await client.query("commit");
        return result;
      } catch (error) {
        await client.query("rollback").catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}
