/** What the fuzz suite knows of one route: its valid requests, its parameters, and what must hold once it accepts. */
import type { HostileServerIds, HostileServerReady } from "../hostile-input-server.ts";
import type { FuzzedServer } from "./fuzzed-server.ts";
import type { Raw } from "./hostile-values.ts";

/** What a route's valid bodies and checks see. */
export interface Ctx {
  ready: HostileServerReady;
  ids: HostileServerIds;
  /** Unique per case: ids made from it never collide with an earlier case's. */
  uid: number;
}
export type Json = Record<string, unknown>;

/** One route as the server registers it, and how to fuzz it. */
export interface RouteSpec {
  method: "GET" | "DELETE" | "POST" | "PUT";
  path: string;
  /**
   * What it is called with: the fuzzed tenant's key (the default), the admin key, nothing (a public route), or the
   * dashboard's session cookie holding the tenant's key.
   */
  key?: "tenant" | "admin" | "none" | "session";
  /** Cases fast-check runs on it, each of which must execute (default: by method, see `runsOf`). */
  runs?: number;
  /** Valid bodies; `undefined` is a request with no body. None for GET and DELETE. */
  bodies?: ((x: Ctx) => unknown)[];
  /** Values that exist, for each path parameter in order. */
  params?: ((x: Ctx) => string[])[];
  /** The query keys it reads. */
  query?: string[];
  /** Values of its query keys that name things that exist, tried beside hostile ones. */
  queryValues?: Record<string, (x: Ctx) => string[]>;
  /** Values that matter to this route, tried at any place by two mutations in five. */
  dictionary?: Raw[];
  gateway?: boolean;
  /** Traces (or their feedback) arrive: a detection pass runs after an accepted case. */
  ingest?: boolean;
  /** Its path parameters name the tenant's own things: another tenant's key must not reach them. */
  owned?: boolean;
  /** Problems with an accepted case: what it answered against what was stored. */
  accepted?: (
    x: Ctx,
    sent: unknown,
    answer: Json,
    delta: Record<string, number>,
    server: FuzzedServer,
  ) => Promise<string[]>;
  /** Reads that must still answer below 500 after an accepted case (`must: 200` where the thing must exist). */
  readBack?: (x: Ctx, sent: unknown, answer: Json, params: string[]) => { path: string; must?: number }[];
}

export const enc = encodeURIComponent;
