import { toInvalidInputError } from "@arc/core";
import { Hono } from "hono";
import { z } from "zod";
import type { Deployer } from "../../deploy/deployer.ts";
import {
  activeDeployment,
  getDeployment,
  listDeployments,
  startCanary,
} from "../../deploy/deployment-store.ts";
import { deploymentFailureRates } from "../../deploy/live-evidence.ts";
import { getReleaseSettings } from "../../deploy/release-settings.ts";
import type { RoutingTable } from "../../gateway/routing-table.ts";
import { listAudit } from "../../store/audit-log.ts";
import type { Database } from "../../store/database.ts";
import { getModelVersion } from "../../store/model-registry.ts";
import type { AuthVariables } from "../auth-middleware.ts";
import { readJson, readOptionalJson } from "../read-json.ts";

const Start = z.object({ candidate: z.string().min(1) }).strict();
const Reason = z.object({ reason: z.string().max(1000).optional() }).strict();

/**
 * Deployments under `/v1`: `GET /deployments` (the running canary and recent ones), `POST /deployments` (start a
 * canary of a validated or approved model), `GET /deployments/:id` (live failure rates per arm and stage, audit
 * trail), `POST /deployments/:id/promote|rollback` (by hand; audited with the caller as actor).
 */
export function deployRoutes(deps: {
  db: Database;
  deployer: Deployer;
  routing: RoutingTable;
  maxBodyBytes: number;
}) {
  const app = new Hono<{ Variables: AuthVariables }>();
  const actor = (c: { get(k: "principal"): { keyId: string } }) => `user:${c.get("principal").keyId}`;

  app.get("/deployments", async (c) => {
    const tenantId = c.get("tenantId");
    const active = await activeDeployment(deps.db, tenantId);
    return c.json({
      active: active ? { ...active, failureRates: await deploymentFailureRates(deps.db, active) } : null,
      recent: await listDeployments(deps.db, tenantId),
    });
  });

  app.post("/deployments", async (c) => {
    const parsed = Start.safeParse(await readJson(c, deps.maxBodyBytes));
    if (!parsed.success) throw toInvalidInputError(parsed.error);
    const tenantId = c.get("tenantId");
    const settings = await getReleaseSettings(deps.db, tenantId);
    // loaded before traffic reaches it, as the deployer does (a model that cannot start a canary is refused below)
    const candidate = await getModelVersion(deps.db, tenantId, parsed.data.candidate);
    if (candidate.status === "validated" || candidate.status === "approved")
      await deps.deployer.prepare(candidate);
    const dep = await startCanary(deps.db, tenantId, {
      candidate: parsed.data.candidate,
      actor: actor(c),
      policy: settings.canary,
    });
    deps.routing.invalidate(tenantId);
    return c.json(dep, 201);
  });

  app.get("/deployments/:id", async (c) => {
    const tenantId = c.get("tenantId");
    const dep = await getDeployment(deps.db, tenantId, c.req.param("id"));
    return c.json({
      deployment: dep,
      failureRates: await deploymentFailureRates(deps.db, dep),
      audit: await listAudit(deps.db, tenantId, { kind: "deployment", id: dep.id }),
    });
  });

  for (const action of ["promote", "rollback"] as const) {
    app.post(`/deployments/:id/${action}`, async (c) => {
      const parsed = Reason.safeParse(await readOptionalJson(c, deps.maxBodyBytes));
      if (!parsed.success) throw toInvalidInputError(parsed.error);
      const args = [c.get("tenantId"), c.req.param("id"), actor(c), parsed.data.reason] as const;
      return c.json(
        action === "promote" ? await deps.deployer.promote(...args) : await deps.deployer.rollback(...args),
      );
    });
  }
  return app;
}
