import { ArcError, InvalidInputError } from "@arc/core";
import { loadServerConfig } from "../config/server-config.ts";
import { readCredentials } from "../serve/credentials.ts";
import { type ParsedArgs, stringFlag } from "./parse-args.ts";

/** Talks to a running `arc serve` over HTTP, as the admin or as a tenant. */
export interface ArcClient {
  url: string;
  request<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
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
  return {
    url,
    async request<T>(method: string, path: string, body?: unknown): Promise<T> {
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
      const payload = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
      if (!res.ok) {
        throw new ArcError(
          `${method} ${path} failed with ${res.status}: ${payload?.error?.message ?? res.statusText}`,
          {
            statusCode: res.status,
          },
        );
      }
      return payload as T;
    },
  };
}
