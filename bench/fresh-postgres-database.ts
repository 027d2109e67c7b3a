// A throwaway database on the PostgreSQL server named by ARC_TEST_DATABASE_URL (or DATABASE_URL), for benchmarks.
import pg from "pg";

/**
 * Runs `fn` with the URL of a fresh database (named `<prefix>_<pid>`), dropped afterwards. Returns null, after
 * printing why, when no server is named or it cannot be reached.
 */
export async function withFreshPostgresDatabase<T>(
  prefix: string,
  fn: (url: string) => Promise<T>,
): Promise<T | null> {
  const serverUrl = process.env.ARC_TEST_DATABASE_URL ?? process.env.DATABASE_URL;
  if (!serverUrl) {
    console.log(`${prefix}: PostgreSQL not measured (set ARC_TEST_DATABASE_URL to a server to measure it)`);
    return null;
  }
  const name = `${prefix}_${process.pid}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  try {
    await admin.connect();
  } catch (error) {
    console.log(`${prefix}: PostgreSQL not measured (cannot connect: ${(error as Error).message})`);
    return null;
  }
  await admin.query(`drop database if exists ${name} with (force)`);
  await admin.query(`create database ${name}`);
  try {
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    return await fn(url.toString());
  } finally {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}
