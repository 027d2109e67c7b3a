/** Valid ingest bodies the fuzz suite mutates: an Arc trace batch and an OTLP export, and how OTLP ids are read. */
import type { Json } from "./route-spec.ts";

const hex = (uid: number, n: number, bytes: number) =>
  (uid.toString(16) + n.toString(16).padStart(4, "0")).padStart(bytes * 2, "0");
const attr = (key: string, value: Json) => ({ key, value });
const started = "2026-05-01T10:00:00Z";

/** A valid trace of two steps (an LLM call that calls a tool, then the tool), its ids made from `id`. */
export function trace(id: string) {
  return {
    id,
    name: "lookup-order",
    startedAt: started,
    endedAt: "2026-05-01T10:00:02.500Z",
    userId: "u-1",
    sessionId: "s-1",
    env: "toolcall",
    status: "ok",
    input: "where is order 12?",
    output: { answer: "It shipped." },
    tags: ["prod"],
    metadata: { region: "eu", attempt: 1 },
    steps: [
      {
        id: `${id}-llm`,
        kind: "llm",
        name: "chat",
        startedAt: started,
        endedAt: "2026-05-01T10:00:01.200Z",
        latencyMs: 1200,
        llm: {
          modelRequested: "arc-small",
          modelServed: "arc-small-v2",
          messages: [
            { role: "system", content: "Be brief." },
            { role: "user", content: "where is order 12?" },
          ],
          tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object" } } }],
          params: { temperature: 0, seed: 7, max_tokens: 64 },
          output: {
            content: null,
            toolCalls: [
              { id: "call_1", type: "function", function: { name: "lookup", arguments: '{"order":12}' } },
            ],
          },
          finishReason: "tool_calls",
          usage: { promptTokens: 31, completionTokens: 9, totalTokens: 40 },
        },
      },
      {
        id: `${id}-tool`,
        kind: "tool",
        name: "lookup",
        parentId: `${id}-llm`,
        startedAt: "2026-05-01T10:00:01.300Z",
        input: { order: 12 },
        output: { status: "shipped" },
        error: { message: "slow", type: "timeout", code: 504, status: 504 },
        metadata: { cached: false },
      },
    ],
  };
}

/** A valid OTLP export of three spans (an agent, its chat call and its tool call), its ids made from `uid`. */
export function otlpExport(uid: number) {
  const traceId = hex(uid, 0, 16);
  const span = (n: number) => hex(uid, n, 8);
  const nanos = (ms: number) => `${BigInt(Date.parse(started) + ms) * 1_000_000n}`;
  return {
    resourceSpans: [
      {
        resource: { attributes: [attr("service.name", { stringValue: "travel-agent" })] },
        scopeSpans: [
          {
            scope: { name: "agent", version: "1.0.0" },
            spans: [
              {
                traceId,
                spanId: span(1),
                name: "invoke_agent travel",
                kind: 1,
                startTimeUnixNano: nanos(0),
                endTimeUnixNano: nanos(3000),
                attributes: [
                  attr("gen_ai.operation.name", { stringValue: "invoke_agent" }),
                  attr("user.id", { stringValue: "u-42" }),
                  attr("gen_ai.conversation.id", { stringValue: "conv-9" }),
                ],
                status: { code: 1 },
              },
              {
                traceId,
                spanId: span(2),
                parentSpanId: span(1),
                name: "chat arc-small",
                kind: 3,
                startTimeUnixNano: nanos(100),
                endTimeUnixNano: nanos(1200),
                attributes: [
                  attr("gen_ai.operation.name", { stringValue: "chat" }),
                  attr("gen_ai.request.model", { stringValue: "arc-small" }),
                  attr("gen_ai.response.model", { stringValue: "arc-small-v2" }),
                  attr("gen_ai.request.temperature", { doubleValue: 0.3 }),
                  attr("gen_ai.request.max_tokens", { intValue: "128" }),
                  attr("gen_ai.usage.input_tokens", { intValue: 31 }),
                  attr("gen_ai.usage.output_tokens", { intValue: "9" }),
                  attr("gen_ai.response.finish_reasons", {
                    arrayValue: { values: [{ stringValue: "stop" }] },
                  }),
                  attr("gen_ai.input.messages", {
                    stringValue: JSON.stringify([
                      { role: "user", parts: [{ type: "text", content: "Weather in Oslo?" }] },
                    ]),
                  }),
                  attr("gen_ai.output.messages", {
                    stringValue: JSON.stringify([
                      {
                        role: "assistant",
                        parts: [{ type: "text", content: "Cold." }],
                        finish_reason: "stop",
                      },
                    ]),
                  }),
                ],
                status: { code: 0 },
              },
              {
                traceId,
                spanId: span(3),
                parentSpanId: span(1),
                name: "execute_tool get_weather",
                kind: 1,
                startTimeUnixNano: nanos(1300),
                endTimeUnixNano: nanos(1400),
                attributes: [
                  attr("gen_ai.operation.name", { stringValue: "execute_tool" }),
                  attr("gen_ai.tool.name", { stringValue: "get_weather" }),
                  attr("gen_ai.tool.call.arguments", { stringValue: '{"city":"Oslo"}' }),
                  attr("gen_ai.tool.call.result", { stringValue: '{"temp":3}' }),
                  attr("retry", { boolValue: false }),
                  attr("labels", { kvlistValue: { values: [attr("raw", { bytesValue: "AAEC" })] } }),
                ],
                status: { code: 2, message: "tool failed" },
              },
            ],
          },
        ],
      },
    ],
  };
}

/** OTLP's ids as the product reads them: hex, or base64 of the right length. */
export function otlpId(id: unknown, bytes: number): string | null {
  if (typeof id !== "string" || !id) return null;
  if (new RegExp(`^[0-9a-fA-F]{${bytes * 2}}$`).test(id)) return id.toLowerCase();
  const decoded = Buffer.from(id, "base64");
  return decoded.length === bytes ? decoded.toString("hex") : null;
}

/** The spans of an export reachable through well-formed containers. */
export function otlpSpans(sent: unknown): unknown[] {
  const list = (v: unknown, key: string) =>
    v !== null && typeof v === "object" && Array.isArray((v as Json)[key])
      ? ((v as Json)[key] as unknown[])
      : [];
  return list(sent, "resourceSpans").flatMap((r) => list(r, "scopeSpans").flatMap((s) => list(s, "spans")));
}
