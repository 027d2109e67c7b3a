import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** The keys made on first start, kept for the local user in `<home>/credentials.json` (mode 0600). */
export interface LocalCredentials {
  adminKey: string;
  tenant: string;
  tenantKey: string;
}

export function credentialsPath(home: string): string {
  return join(home, "credentials.json");
}

export function readCredentials(home: string): LocalCredentials | null {
  const path = credentialsPath(home);
  if (!existsSync(path)) return null;
  return JSON.parse(readFileSync(path, "utf8")) as LocalCredentials;
}

export function writeCredentials(home: string, credentials: LocalCredentials): void {
  const path = credentialsPath(home);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
}
