import { ArcError, InvalidInputError } from "@arc/core";
import { loadServerConfig } from "../config/server-config.ts";
import { readCredentials } from "../serve/credentials.ts";
import { type FlagSpec, type ParsedArgs, stringFlag } from "./parse-args.ts";

/** The flags `arcClient` reads; every command that talks to a server accepts them. */
export const CLIENT_FLAGS = { url: "string", key: "string", home: "string" } as const satisfies FlagSpec;

/** Talks to a running `arc serve` over HTTP, as the admin or as a tenant. */
export interface ArcClient {
  /** The server's base URL, without a trailing slash. */
  url: string;
  /** Sends JSON with the key; answers the parsed body, or throws an ArcError with the server's status and message. */
  request<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
  /** GETs a body that is not JSON (an export file) as bytes; a failed answer throws as `request` does. */
  download(path: string): Promise<Uint8Array>;
}

/**
 * The server URL (--url, ARC_URL, else the local default) and the key for `role`: --key, then ARC_ADMIN_KEY or
 * ARC_API_KEY, then the credentials `arc serve` wrote under ARC_HOME on first start.
 */
export function arcClient(args: ParsedArgs, role: "admin" | "tenant", env = process.env): ArcClient {
  const config = loadServerConfig(env, { home: stringFlag(args, "home") });
  const url = (stringFlag(args, "url") ?? env.ARC_URL ?? `http://127.0.0.1:${config.port}`).replace(
    /\/$/,
    "",
  );
  const saved = readCredentials(config.home);
  const key =
    stringFlag(args, "key") ??
    (role === "admin" ? env.ARC_ADMIN_KEY : env.ARC_API_KEY) ??
    (role === "admin" ? saved?.adminKey : saved?.tenantKey);
  if (!key) {
    const variable = role === "admin" ? "ARC_ADMIN_KEY" : "ARC_API_KEY";
    throw new InvalidInputError(
      `no ${role} key: pass --key, set ${variable}, or run \`arc serve\` once so it writes ${config.home}/credentials.json`,
    );
  }
  const send = async (method: string, path: string, body?: unknown): Promise<Response> => {
    let res: Response;
    try {
      res = await fetch(`${url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (error) {
      throw new ArcError(
        `cannot reach Arc at ${url} (${(error as Error).message}); is \`arc serve\` running?`,
        {
          isRetryable: true,
          cause: error,
        },
      );
    }
    if (!res.ok) {
      const payload = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
      throw new ArcError(
        `${method} ${path} failed with ${res.status}: ${payload?.error?.message ?? res.statusText}`,
        {
          statusCode: res.status,
        },
      );
    }
    return res;
  };
  return {
    url,
    async request<T>(method: string, path: string, body?: unknown): Promise<T> {
      const res = await send(method, path, body);
      return (await res.json().catch(() => null)) as T;
    },
    async download(path: string): Promise<Uint8Array> {
      return new Uint8Array(await (await send("GET", path)).arrayBuffer());
    },
  };
}
