import { initialSchema } from "./001-initial-schema.ts";

/** A schema change, applied once, in order, in its own transaction. Never edit one that has shipped: add a new one. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Every migration, oldest first. */
export const migrations: Migration[] = [{ version: 1, name: "initial schema", sql: initialSchema }];
