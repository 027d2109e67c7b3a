import { checkJsonValue, DEFAULT_JSON_LIMITS } from "@arc/core";
import { type Context, Hono } from "hono";
import type { ServerMetrics } from "../../metrics/metrics-registry.ts";
import { checkExportShape } from "../../otlp/otlp-json.ts";
import { decodeOtlpTraces, encodeOtlpResponse, encodeRpcStatus } from "../../otlp/otlp-protobuf.ts";
import { countSpans, otlpToTraces } from "../../otlp/otlp-to-traces.ts";
import type { Database } from "../../store/database.ts";
import { traceWriterOf } from "../../store/trace-writer.ts";
import type { AuthVariables } from "../auth-middleware.ts";
import { errorBody, HttpError } from "../http-error.ts";
import { parseJsonBody, readBody } from "../read-json.ts";

/** Most spans one export may carry; exporters batch far fewer (the OpenTelemetry SDKs' default is 512). */
export const MAX_SPANS_PER_EXPORT = 10_000;

/** The gRPC status code OTLP/HTTP protobuf puts in a refusal's google.rpc.Status, by HTTP status. */
function rpcCode(status: number): number {
  if (status === 413 || status === 429) return 8; // RESOURCE_EXHAUSTED
  if (status === 503) return 14; // UNAVAILABLE
  if (status >= 500) return 13; // INTERNAL
  return 3; // INVALID_ARGUMENT
}

/** Whether a Content-Type names OTLP's protobuf encoding. */
const isProtobuf = (contentType: string) => /^application\/(x-)?protobuf\b/i.test(contentType);

/**
 * `POST /v1/otlp/v1/traces`: OTLP/HTTP in JSON or protobuf, gzip or not, GenAI spans mapped to traces and steps.
 * A protobuf export is answered in protobuf: an ExportTraceServiceResponse, or a google.rpc.Status when refused.
 */
export function otlpRoutes(deps: { db: Database; metrics: ServerMetrics; maxBodyBytes: number }) {
  const app = new Hono<{ Variables: AuthVariables }>();
  app.post("/v1/traces", async (c) => {
    const contentType = c.req.header("content-type") ?? "";
    if (!isProtobuf(contentType)) return c.json(await ingest(c, await readOtlpJson(c)));
    try {
      const bytes = await readBody(c, deps.maxBodyBytes);
      let request: unknown;
      try {
        request = decodeOtlpTraces(bytes);
      } catch (error) {
        throw new HttpError(400, "invalid_request", (error as Error).message);
      }
      checkJsonValue(request, DEFAULT_JSON_LIMITS, {
        surrogates: "replace",
        mayHoldLoneSurrogates: true,
        mayHoldNul: true,
        nonFiniteNumbers: "keep",
      });
      const partialSuccess = await ingest(c, request);
      return c.body(encodeOtlpResponse(partialSuccess.partialSuccess), 200, {
        "content-type": "application/x-protobuf",
      });
    } catch (error) {
      const { status, body } = errorBody(error);
      if (status >= 500) throw error;
      deps.metrics.rejectedRequests.inc({ reason: String(body.error.type) });
      return c.body(encodeRpcStatus(rpcCode(status), String(body.error.message)), status as 400, {
        "content-type": "application/x-protobuf",
      });
    }
  });

  /** Reads an OTLP/JSON body: JSON's content types only, lone surrogates mended rather than refused. */
  async function readOtlpJson(c: Context): Promise<unknown> {
    const contentType = c.req.header("content-type") ?? "";
    if (contentType && !/^application\/(.+\+)?json\b/i.test(contentType)) {
      throw new HttpError(
        415,
        "unsupported_media_type",
        `expected Content-Type application/json or application/x-protobuf (OTLP's two encodings), got "${contentType}"`,
      );
    }
    // A lone surrogate costs telemetry nothing worth a refusal: it becomes U+FFFD and the span is kept.
    return parseJsonBody(await readBody(c, deps.maxBodyBytes), { loneSurrogates: "replace" });
  }

  /** Maps and stores an export (either encoding); returns OTLP's partial success. */
  async function ingest(
    c: Context<{ Variables: AuthVariables }>,
    body: unknown,
  ): Promise<{ partialSuccess: { rejectedSpans?: number; errorMessage?: string } }> {
    checkExportShape(body);
    const resourceSpans = body.resourceSpans ?? [];
    const spans = resourceSpans.reduce((n: number, r) => n + countSpans(r), 0);
    if (spans > MAX_SPANS_PER_EXPORT) {
      throw new HttpError(
        413,
        "payload_too_large",
        `the export holds ${spans} spans, more than the limit of ${MAX_SPANS_PER_EXPORT} a request; lower the exporter's batch size (OTEL_BSP_MAX_EXPORT_BATCH_SIZE)`,
      );
    }
    const mapping = await otlpToTraces(body);
    const result =
      mapping.traces.length > 0
        ? await traceWriterOf(deps.db).write(c.get("tenantId"), mapping.traces)
        : { traces: 0, steps: 0 };
    deps.metrics.ingestedTraces.inc({ source: "otlp" }, result.traces);
    deps.metrics.ingestedSteps.inc({ source: "otlp" }, result.steps);
    if (mapping.rejectedSpans > 0)
      deps.metrics.rejectedRequests.inc({ reason: "otlp_span" }, mapping.rejectedSpans);
    return mapping.rejectedSpans > 0
      ? { partialSuccess: { rejectedSpans: mapping.rejectedSpans, errorMessage: mapping.errors.join("; ") } }
      : { partialSuccess: {} };
  }
  return app;
}
