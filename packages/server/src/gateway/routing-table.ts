import { routesToCanary } from "@arc/core";
import type { Queryable } from "../store/database.ts";
import { getModelVersion, listModelVersions, type ModelVersion } from "../store/model-registry.ts";
import { RefreshingCache } from "../store/refreshing-cache.ts";

/** Where a tenant's traffic goes now: the production model, and the canary with its share while one runs. */
export interface Route {
  control: ModelVersion;
  canary: { model: ModelVersion; share: number; deploymentId: string; stage: number } | null;
  /** The names and ids of all the tenant's model versions: the `model` names the gateway answers besides `arc`. */
  models: ReadonlySet<string>;
}

/** The model one request goes to, and why (the trace records it). */
export interface RouteChoice {
  model: ModelVersion;
  arm: "control" | "canary" | "pinned";
  deploymentId?: string;
  stage?: number;
}

/** How long a tenant's route may be used (other processes' changes land within it); it is read again from half of it. */
const ttlMs = 1_000;

/**
 * Each tenant's route, read from the deployments and the model registry and cached, so requests do not query the
 * database: a route is used for at most a second, and read again in the background before that (see
 * `RefreshingCache`). The deployer calls `invalidate` after a transition in this process, so a rollback here takes
 * effect on the very next request.
 */
export class RoutingTable {
  /** Routes by tenant; a tenant with no production model yet is not cached, so its first one shows at once. */
  private readonly cache: RefreshingCache<Route | null>;

  constructor(private readonly db: Queryable) {
    this.cache = new RefreshingCache((tenantId) => this.load(tenantId), {
      ttlMs,
      refreshAfterMs: ttlMs / 2,
      keep: (r) => r !== null,
    });
  }

  /** The tenant's route, or null when it has no production model yet. */
  route(tenantId: string): Promise<Route | null> {
    return this.cache.get(tenantId);
  }

  /** Picks the model for a request: sticky by `stickyKey` (a user or conversation), random without one. */
  choose(route: Route, stickyKey: string | undefined): RouteChoice {
    const canary = route.canary;
    if (!canary) return { model: route.control, arm: "control" };
    const key = stickyKey ?? Math.random().toString(36);
    const toCanary = routesToCanary(key, canary.deploymentId, canary.share);
    return {
      model: toCanary ? canary.model : route.control,
      arm: toCanary ? "canary" : "control",
      deploymentId: canary.deploymentId,
      stage: canary.stage,
    };
  }

  /** Forgets a tenant's cached route (after a deployment transition). */
  invalidate(tenantId: string): void {
    this.cache.delete(tenantId);
  }

  private async load(tenantId: string): Promise<Route | null> {
    const active = await this.db.query<{
      id: string;
      candidate_id: string;
      control_id: string;
      share: number;
      stage: number;
    }>(
      "select id, candidate_id, control_id, share, stage from deployments where tenant_id = $1 and status = 'canary'",
      [tenantId],
    );
    const dep = active[0];
    if (dep) {
      return {
        control: await getModelVersion(this.db, tenantId, dep.control_id),
        canary: {
          model: await getModelVersion(this.db, tenantId, dep.candidate_id),
          share: Number(dep.share),
          deploymentId: dep.id,
          stage: Number(dep.stage),
        },
        models: await this.modelNames(tenantId),
      };
    }
    const promoted = await listModelVersions(this.db, tenantId, ["promoted"]);
    return promoted[0]
      ? { control: promoted[0], canary: null, models: await this.modelNames(tenantId) }
      : null;
  }

  private async modelNames(tenantId: string): Promise<ReadonlySet<string>> {
    const rows = await this.db.query<{ id: string; name: string }>(
      "select id, name from model_versions where tenant_id = $1",
      [tenantId],
    );
    return new Set(rows.flatMap((r) => [r.id, r.name]));
  }
}
