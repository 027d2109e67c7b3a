import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** The keys made on first start, kept for the local user in `<home>/credentials.json` (mode 0600). */
export interface LocalCredentials {
  /** Key of the admin who manages tenants and keys. */
  adminKey: string;
  /** Name of the tenant made on first start (`default`), so the CLI works without setup. */
  tenant: string;
  /** A key of that tenant, the one `arc` commands use by default. */
  tenantKey: string;
}

/** Where the first-start keys live under an Arc home. */
export function credentialsPath(home: string): string {
  return join(home, "credentials.json");
}

/** The first-start keys, or null before the first start (or when the file was removed). */
export function readCredentials(home: string): LocalCredentials | null {
  const path = credentialsPath(home);
  if (!existsSync(path)) return null;
  return JSON.parse(readFileSync(path, "utf8")) as LocalCredentials;
}

/** Stores the first-start keys readable by the owner only (0600, also when the file existed with looser mode). */
export function writeCredentials(home: string, credentials: LocalCredentials): void {
  const path = credentialsPath(home);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
}
