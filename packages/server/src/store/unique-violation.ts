import { ConflictError } from "@arc/core";

/**
 * Runs a write and turns PostgreSQL's unique-constraint violation (code 23505: another writer got there first) into
 * a ConflictError with `message`; other errors pass through. Checking the code, not the error text, holds across
 * PGlite, PostgreSQL versions and locales.
 */
export async function conflictOnDuplicate<T>(write: () => Promise<T>, message: string): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if ((error as { code?: unknown })?.code === "23505") throw new ConflictError(message, { cause: error });
    throw error;
  }
}
