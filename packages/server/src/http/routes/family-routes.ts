import { InvalidInputError, NotFoundError, type TaskFamily } from "@arc/core";
import { Hono } from "hono";
import {
  deleteTaskFamily,
  listTaskFamilySpecs,
  putTaskFamily,
  tenantTaskFamilies,
} from "../../families/task-family-store.ts";
import type { Database } from "../../store/database.ts";
import type { AuthVariables } from "../auth-middleware.ts";
import { readJson } from "../read-json.ts";

/** A family as the API lists it: what it offers and can do, and whether the server or the tenant registered it. */
function describeFamily(family: TaskFamily, source: "server" | "tenant") {
  return {
    env: family.env,
    description: family.description ?? null,
    source,
    tools: (family.tools ?? []).map((t) => ({
      name: t.name,
      description: t.description,
      parameters: t.parameters,
    })),
    generator: family.generate !== undefined,
    verifier: family.verify !== undefined,
    multiTurn: family.session !== undefined,
  };
}

/**
 * `GET /v1/task-families` (the server's families and the tenant's own), `PUT /v1/task-families/:env` (registers or
 * replaces a family given as data: a JsonFamilySpec of tools and argument checks, or judge only) and
 * `DELETE /v1/task-families/:env`. A tenant's families judge its traces, datasets, validations and runs only.
 */
export function familyRoutes(deps: { db: Database; maxBodyBytes: number }) {
  const app = new Hono<{ Variables: AuthVariables }>();

  app.get("/task-families", async (c) => {
    const tenantId = c.get("tenantId");
    const own = new Set((await listTaskFamilySpecs(deps.db, tenantId)).map((f) => f.env));
    const families = (await tenantTaskFamilies(deps.db, tenantId)).list();
    return c.json({ data: families.map((f) => describeFamily(f, own.has(f.env) ? "tenant" : "server")) });
  });

  app.put("/task-families/:env", async (c) => {
    const env = c.req.param("env");
    const body = await readJson(c, deps.maxBodyBytes);
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      throw new InvalidInputError("body: expected a task family spec object", { field: "body" });
    }
    const spec = body as Record<string, unknown>;
    if (spec.env !== undefined && spec.env !== env) {
      throw new InvalidInputError(
        `env: the body names ${JSON.stringify(spec.env)}, the path ${JSON.stringify(env)}`,
        {
          field: "env",
        },
      );
    }
    const { family, created } = await putTaskFamily(deps.db, c.get("tenantId"), { ...spec, env });
    return c.json(describeFamily(family, "tenant"), created ? 201 : 200);
  });

  app.delete("/task-families/:env", async (c) => {
    const env = c.req.param("env");
    if (!(await deleteTaskFamily(deps.db, c.get("tenantId"), env))) {
      throw new NotFoundError(
        `task family ${JSON.stringify(env)}: this tenant registered none by that env id`,
      );
    }
    return c.body(null, 204);
  });
  return app;
}
