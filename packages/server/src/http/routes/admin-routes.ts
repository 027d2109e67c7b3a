import { InvalidInputError, NotFoundError, refuseUnknownKeys } from "@arc/core";
import { Hono } from "hono";
import type { Database } from "../../store/database.ts";
import { createApiKey, listApiKeys, revokeApiKey, validateKeyName } from "../../store/keys.ts";
import { createTenant, findTenant, listTenants } from "../../store/tenants.ts";
import type { AuthVariables } from "../auth-middleware.ts";
import type { Authenticator } from "../authenticator.ts";
import { readJson, readOptionalJson } from "../read-json.ts";

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Admin-only: tenants and their keys. */
export function adminRoutes(deps: { db: Database; authenticator: Authenticator; maxBodyBytes: number }) {
  const app = new Hono<{ Variables: AuthVariables }>();

  app.get("/tenants", async (c) => c.json({ data: await listTenants(deps.db) }));

  app.post("/tenants", async (c) => {
    const body = await readJson(c, deps.maxBodyBytes);
    if (isObject(body)) refuseUnknownKeys(body, ["name"], "a tenant");
    return c.json(await createTenant(deps.db, isObject(body) ? body.name : undefined), 201);
  });

  app.get("/tenants/:tenant/keys", async (c) => {
    const tenant = await findTenant(deps.db, c.req.param("tenant"));
    if (!tenant) throw new NotFoundError(`no tenant "${c.req.param("tenant")}"`);
    return c.json({ data: await listApiKeys(deps.db, tenant.id) });
  });

  app.post("/tenants/:tenant/keys", async (c) => {
    const tenant = await findTenant(deps.db, c.req.param("tenant"));
    if (!tenant) throw new NotFoundError(`no tenant "${c.req.param("tenant")}"`);
    const body = await readOptionalJson(c, deps.maxBodyBytes);
    if (!isObject(body))
      throw new InvalidInputError(`expected a JSON object {name?}, got ${JSON.stringify(body)}`);
    // a tenant's key is all this makes: a `role` or `tenantId` field is refused, not ignored
    refuseUnknownKeys(body, ["name"], "a key request");
    const created = await createApiKey(
      deps.db,
      { role: "tenant", tenantId: tenant.id },
      validateKeyName(body.name),
    );
    return c.json({ ...created, tenantId: tenant.id }, 201);
  });

  app.delete("/keys/:id", async (c) => {
    await revokeApiKey(deps.db, c.req.param("id"));
    deps.authenticator.forget();
    return c.json({ id: c.req.param("id"), revoked: true });
  });

  return app;
}
