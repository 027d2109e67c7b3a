import type { Hono } from "hono";
import type { RegistrationPolicy } from "../deploy/registration-policy.ts";
import type { AuthVariables } from "../http/auth-middleware.ts";
import { analyticsRoutes } from "../http/routes/analytics-routes.ts";
import { annotationRoutes } from "../http/routes/annotation-routes.ts";
import { datasetRoutes } from "../http/routes/dataset-routes.ts";
import { deployRoutes } from "../http/routes/deploy-routes.ts";
import { familyRoutes } from "../http/routes/family-routes.ts";
import { gatewayRoutes } from "../http/routes/gateway-routes.ts";
import { judgeRoutes } from "../http/routes/judge-routes.ts";
import { modelRoutes } from "../http/routes/model-routes.ts";
import { patternRoutes } from "../http/routes/pattern-routes.ts";
import { rewardRoutes } from "../http/routes/reward-routes.ts";
import { runRoutes } from "../http/routes/run-routes.ts";
import { teachingRoutes } from "../http/routes/teaching-routes.ts";
import type { RunService } from "../orchestrator/run-service.ts";
import type { Database } from "../store/database.ts";
import type { FailureService } from "./failure-service.ts";
import type { ReleaseService } from "./release-service.ts";

/** Routes mounted under `/v1` behind a tenant key; `createApp({ tenantRoutes })` takes them. */
export type TenantRoutes = { path: string; app: Hono<{ Variables: AuthVariables }> }[];

/** What the tenant routes are built over: the database and whichever stage services this process runs. */
export interface TenantRouteServices {
  db: Database;
  maxBodyBytes: number;
  /** The gateway, teaching, models, EvalSets and deployments. */
  release?: { service: ReleaseService; registration: RegistrationPolicy };
  /** Patterns and datasets. */
  failures?: FailureService;
  /** Training runs. */
  runs?: RunService;
}

/** The one place the stages' routes are built: each stage service given is exposed under `/v1`. */
export function tenantRoutes(services: TenantRouteServices): TenantRoutes {
  const { db, maxBodyBytes } = services;
  const routes: TenantRoutes = [
    { path: "/", app: familyRoutes({ db, maxBodyBytes }) },
    { path: "/", app: analyticsRoutes({ db, maxBodyBytes }) },
    { path: "/", app: annotationRoutes({ db, maxBodyBytes }) },
  ];
  if (services.release) {
    const { service, registration } = services.release;
    routes.push(
      { path: "/", app: gatewayRoutes(service.gateway, maxBodyBytes) },
      { path: "/", app: teachingRoutes(service.teaching, maxBodyBytes) },
      {
        path: "/",
        app: modelRoutes({
          ...service.validatorDeps,
          handedEvalSets: service.evalSets,
          maxBodyBytes,
          registration,
        }),
      },
      {
        path: "/",
        app: deployRoutes({ db, deployer: service.deployer, routing: service.gateway.routing, maxBodyBytes }),
      },
    );
  }
  if (services.failures) {
    const { setupRegistry } = services.failures;
    routes.push(
      { path: "/", app: patternRoutes({ db, maxBodyBytes, setupRegistry }) },
      { path: "/", app: datasetRoutes({ db, maxBodyBytes, setupRegistry }) },
      {
        path: "/",
        app: judgeRoutes({
          db,
          maxBodyBytes,
          upstreams: services.release?.registration.upstreams ?? {},
          setupRegistry,
        }),
      },
      {
        path: "/",
        app: rewardRoutes({ db, maxBodyBytes, upstreams: services.release?.registration.upstreams ?? {} }),
      },
    );
  }
  if (services.runs) {
    const { orchestrator } = services.runs;
    routes.push({
      path: "/",
      app: runRoutes({
        db,
        config: orchestrator.config,
        judgeUpstreams: orchestrator.judgeUpstreams,
        artifactsDir: orchestrator.artifactsDir,
        maxBodyBytes,
      }),
    });
  }
  return routes;
}
