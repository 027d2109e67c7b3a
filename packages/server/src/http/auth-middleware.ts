import type { MiddlewareHandler } from "hono";
import type { Principal } from "../store/keys.ts";
import type { Authenticator } from "./authenticator.ts";
import { HttpError } from "./http-error.ts";

/** Hono context variables the auth middleware sets. */
export type AuthVariables = { principal: Principal; tenantId: string };

function bearerKey(header: string | undefined): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return match ? match[1] : null;
}

/** Lets a request through only with a key of the given role; sets `principal` (and `tenantId` for tenant keys). */
export function requireRole(
  authenticator: Authenticator,
  role: "admin" | "tenant",
  onReject?: () => void,
): MiddlewareHandler<{ Variables: AuthVariables }> {
  return async (c, next) => {
    const key = bearerKey(c.req.header("authorization"));
    if (!key) {
      onReject?.();
      throw new HttpError(
        401,
        "missing_api_key",
        "missing API key: send the header 'Authorization: Bearer <key>'",
      );
    }
    const principal = await authenticator.principalFor(key);
    if (!principal) {
      onReject?.();
      throw new HttpError(401, "invalid_api_key", "Incorrect API key provided: unknown or revoked key");
    }
    if (principal.role !== role) {
      onReject?.();
      throw new HttpError(
        403,
        "forbidden",
        role === "admin"
          ? "this endpoint needs an admin key"
          : "this endpoint needs a tenant key (admin keys own no data)",
      );
    }
    c.set("principal", principal);
    if (principal.role === "tenant") c.set("tenantId", principal.tenantId);
    await next();
  };
}
