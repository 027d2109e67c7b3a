import { randomUUID } from "node:crypto";
import { type ChatMessage, RecordId, type Trace } from "@arc/core";
import type { CompletionSummary } from "./completion-summary.ts";
import type { RouteChoice } from "./routing-table.ts";

/** What the gateway knows about one call when it ends. */
export interface GatewayCall {
  body: Record<string, unknown>;
  choice: RouteChoice;
  startedAt: Date;
  endedAt: Date;
  /** HTTP status the client got. */
  status: number;
  summary: CompletionSummary;
  userId?: string;
  sessionId?: string;
  /** The task environment, from the `x-arc-env` header (selects the verifier that judges the trace). */
  env?: string;
  /** The SDK's trace and step this call is (its `x-arc-*-id` headers); ids that are not valid record ids are ignored. */
  correlation?: { traceId?: string; stepId?: string; parentStepId?: string };
}

/** The correlation ids that are usable as record ids (a bad header must not make the trace unstorable). */
function validIds(c: GatewayCall["correlation"]): {
  traceId?: string;
  stepId?: string;
  parentStepId?: string;
} {
  const ok = (v: string | undefined) => (v !== undefined && RecordId.safeParse(v).success ? v : undefined);
  const traceId = ok(c?.traceId);
  // a step id is only meaningful inside the SDK's trace
  return traceId ? { traceId, stepId: ok(c?.stepId), parentStepId: ok(c?.parentStepId) } : {};
}

const PARAM_KEYS = [
  "temperature",
  "top_p",
  "max_tokens",
  "max_completion_tokens",
  "seed",
  "stop",
  "n",
  "stream",
];

/**
 * The trace of one gateway call: one LLM step carrying the model version that answered, so clients without the SDK
 * are captured too and live failure rates can be split by version. Deployment, arm and stage go to `metadata`
 * (the deployer counts a canary's evidence from them). Called through `@arc/sdk`, the trace and step take the SDK's
 * ids (headers), so the store merges the two records into one trace with one step.
 */
export function gatewayTrace(call: GatewayCall): Trace {
  const ids = validIds(call.correlation);
  const id = ids.traceId ?? `gw-${randomUUID()}`;
  const messages = Array.isArray(call.body.messages) ? (call.body.messages as ChatMessage[]) : [];
  const params: Record<string, unknown> = {};
  for (const k of PARAM_KEYS) if (call.body[k] !== undefined) params[k] = call.body[k];
  const failed = call.status >= 400 || call.summary.error !== undefined;
  const latencyMs = call.endedAt.getTime() - call.startedAt.getTime();
  const lastUser = [...messages].reverse().find((m) => m.role === "user");
  return {
    id,
    name: "chat.completions",
    startedAt: call.startedAt.toISOString(),
    endedAt: call.endedAt.toISOString(),
    userId: call.userId,
    sessionId: call.sessionId,
    env: call.env,
    status: failed ? "error" : "ok",
    input: typeof lastUser?.content === "string" ? lastUser.content : undefined,
    output: call.summary.content ?? undefined,
    metadata: {
      source: "gateway",
      modelVersion: call.choice.model.id,
      arm: call.choice.arm,
      ...(call.choice.deploymentId
        ? { deploymentId: call.choice.deploymentId, stage: call.choice.stage }
        : {}),
    },
    steps: [
      {
        // a call inside the SDK's trace that names no step is a step of its own, never merged into another call's
        id: ids.stepId ?? (ids.traceId ? `gw-${randomUUID()}` : `${id}-llm`),
        ...(ids.parentStepId ? { parentId: ids.parentStepId } : {}),
        kind: "llm",
        name: "chat.completions",
        startedAt: call.startedAt.toISOString(),
        endedAt: call.endedAt.toISOString(),
        latencyMs,
        llm: {
          modelRequested: typeof call.body.model === "string" ? call.body.model : undefined,
          modelServed: call.choice.model.name,
          modelVersion: call.choice.model.id,
          messages,
          tools: Array.isArray(call.body.tools) ? (call.body.tools as Record<string, unknown>[]) : undefined,
          params,
          output: {
            content: call.summary.content,
            ...(call.summary.toolCalls.length ? { toolCalls: call.summary.toolCalls } : {}),
          },
          finishReason: call.summary.finishReason,
          usage: call.summary.usage,
        },
        ...(failed
          ? {
              error: {
                message: call.summary.error?.message ?? `HTTP ${call.status}`,
                type: call.summary.error?.type,
                code: call.summary.error?.code,
                status: call.status,
              },
            }
          : {}),
      },
    ],
  };
}
