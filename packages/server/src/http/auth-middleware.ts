import type { MiddlewareHandler } from "hono";
import type { Principal } from "../store/keys.ts";
import type { Authenticator } from "./authenticator.ts";
import { HttpError } from "./http-error.ts";
import { requestHeader } from "./request-header.ts";

/** Hono context variables the auth middleware sets. */
export type AuthVariables = { principal: Principal; tenantId: string };

function bearerKey(header: string | undefined): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return match ? match[1] : null;
}

/** The header with which an admin key acts for one tenant on the tenant routes (its id or name). */
export const actingTenantHeader = "arc-tenant";

/**
 * Lets a request through only with a key of the given role; sets `principal` (and `tenantId` for tenant keys). An
 * admin key passes the tenant routes too when it names a tenant in the `arc-tenant` header, and acts for that tenant
 * (its writes are audited with the admin key as actor).
 */
export function requireRole(
  authenticator: Authenticator,
  role: "admin" | "tenant",
  onReject?: () => void,
): MiddlewareHandler<{ Variables: AuthVariables }> {
  return async (c, next) => {
    const key = bearerKey(requestHeader(c, "authorization"));
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
    const actingFor = requestHeader(c, actingTenantHeader);
    if (role === "tenant" && actingFor !== undefined) {
      if (principal.role === "tenant") {
        if (actingFor !== principal.tenantId) {
          onReject?.();
          throw new HttpError(
            403,
            "forbidden",
            `${actingTenantHeader}: a tenant key acts for its own tenant only; leave the header out`,
          );
        }
      } else {
        const tenant = await authenticator.tenant(actingFor);
        if (!tenant) {
          onReject?.();
          throw new HttpError(
            404,
            "not_found",
            `${actingTenantHeader}: no tenant ${JSON.stringify(actingFor)}`,
          );
        }
        c.set("principal", principal);
        c.set("tenantId", tenant.id);
        return next();
      }
    }
    if (principal.role !== role) {
      onReject?.();
      throw new HttpError(
        403,
        "forbidden",
        role === "admin"
          ? "this endpoint needs an admin key"
          : `this endpoint needs a tenant key, or an admin key with the header '${actingTenantHeader}: <tenant id or name>'`,
      );
    }
    c.set("principal", principal);
    if (principal.role === "tenant") c.set("tenantId", principal.tenantId);
    await next();
  };
}
