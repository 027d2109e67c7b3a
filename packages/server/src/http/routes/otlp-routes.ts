import { Hono } from "hono";
import type { ServerMetrics } from "../../metrics/metrics-registry.ts";
import type { ExportTraceServiceRequest } from "../../otlp/otlp-json.ts";
import { countSpans, otlpToTraces } from "../../otlp/otlp-to-traces.ts";
import type { Database } from "../../store/database.ts";
import { insertTraces } from "../../store/trace-store.ts";
import type { AuthVariables } from "../auth-middleware.ts";
import { HttpError } from "../http-error.ts";
import { readJson } from "../read-json.ts";

/** Most spans one export may carry; exporters batch far fewer (the OpenTelemetry SDKs' default is 512). */
export const MAX_SPANS_PER_EXPORT = 10_000;

/** `POST /v1/otlp/v1/traces`: OTLP/HTTP with JSON encoding, GenAI spans mapped to traces and steps. */
export function otlpRoutes(deps: { db: Database; metrics: ServerMetrics; maxBodyBytes: number }) {
  const app = new Hono<{ Variables: AuthVariables }>();
  app.post("/v1/traces", async (c) => {
    if (/protobuf/i.test(c.req.header("content-type") ?? "")) {
      throw new HttpError(
        415,
        "unsupported_media_type",
        "only OTLP/HTTP JSON is accepted: set the exporter's protocol to http/json (OTEL_EXPORTER_OTLP_PROTOCOL=http/json)",
      );
    }
    // A lone surrogate costs telemetry nothing worth a refusal: it becomes U+FFFD and the span is kept.
    const body = await readJson(c, deps.maxBodyBytes, { loneSurrogates: "replace" });
    if (
      typeof body !== "object" ||
      body === null ||
      !Array.isArray((body as ExportTraceServiceRequest).resourceSpans)
    ) {
      throw new HttpError(
        400,
        "invalid_request",
        "resourceSpans: expected an array (an OTLP ExportTraceServiceRequest)",
      );
    }
    const resourceSpans = (body as ExportTraceServiceRequest).resourceSpans as unknown[];
    const spans = resourceSpans.reduce((n: number, r) => n + countSpans(r), 0);
    if (spans > MAX_SPANS_PER_EXPORT) {
      throw new HttpError(
        413,
        "payload_too_large",
        `the export holds ${spans} spans, more than the limit of ${MAX_SPANS_PER_EXPORT} a request; lower the exporter's batch size (OTEL_BSP_MAX_EXPORT_BATCH_SIZE)`,
      );
    }
    const mapping = await otlpToTraces(body as ExportTraceServiceRequest);
    const result =
      mapping.traces.length > 0
        ? await insertTraces(deps.db, c.get("tenantId"), mapping.traces)
        : { traces: 0, steps: 0 };
    deps.metrics.ingestedTraces.inc({ source: "otlp" }, result.traces);
    deps.metrics.ingestedSteps.inc({ source: "otlp" }, result.steps);
    if (mapping.rejectedSpans > 0)
      deps.metrics.rejectedRequests.inc({ reason: "otlp_span" }, mapping.rejectedSpans);
    return c.json(
      mapping.rejectedSpans > 0
        ? {
            partialSuccess: { rejectedSpans: mapping.rejectedSpans, errorMessage: mapping.errors.join("; ") },
          }
        : { partialSuccess: {} },
    );
  });
  return app;
}
