/**
 * Tenant-supplied computation sent where Arc runs it: schemas and regexes in the gateway's `response_format` and
 * `tools` (compiled into a grammar by a real embedded model), in the tools of ingested traces (Arc SDK and OTLP,
 * checked by detection), in a tenant's task family (checked by rewards and detection), and `$id`/`$ref` pairs sent
 * by two tenants. Each attack is a fast-check property over the values of `attack-values.ts`.
 */
import fc from "fast-check";
import { type IdPair, idPair, type SchemaAttack, schemaAttack } from "./attack-values.ts";

type Json = Record<string, unknown>;

/** Whose key a request is sent with: the fuzzed tenant's, the bystander's, or the tenant served by a real model. */
export type Sender = "tenant" | "bystander" | "engine";

/** One request of an attack. */
export interface AttackRequest {
  as: Sender;
  method: "POST" | "PUT";
  path: string;
  body: unknown;
}

/** What one attack sends, and what another tenant must not see of it. */
export interface AttackSpec<T> {
  name: string;
  runs: number;
  values: fc.Arbitrary<T>;
  /** What a case is, in words. */
  describe(value: T): string;
  /** Its requests, sent one after another; `uid` is unique per case. */
  requests(value: T, uid: number): AttackRequest[];
  /** Every queued trace is judged after the requests, within the case's time bound. */
  detect?: boolean;
  /** Reads (by path, with the sender's key) whose answers must not contain `secret`. */
  sealed?(value: T, uid: number): { as: Sender; path: string; secret: string; mustHave?: string }[];
}

const started = "2026-05-01T10:00:00Z";

/** A trace of one LLM step offered `schema` as the parameters of its tool `lookup`, which it calls with `argument`. */
function toolTrace(id: string, schema: Json, argument: Json, env?: string) {
  return {
    id,
    name: "attack",
    startedAt: started,
    endedAt: "2026-05-01T10:00:01Z",
    status: "ok",
    ...(env ? { env } : {}),
    input: "Where is order 12?",
    steps: [
      {
        id: `${id}-llm`,
        kind: "llm",
        name: "chat",
        startedAt: started,
        endedAt: "2026-05-01T10:00:01Z",
        llm: {
          modelRequested: "arc-small",
          messages: [{ role: "user", content: "Where is order 12?" }],
          tools: [{ type: "function", function: { name: "lookup", parameters: schema } }],
          output: {
            content: null,
            toolCalls: [
              {
                id: "call_1",
                type: "function",
                function: { name: "lookup", arguments: JSON.stringify(argument) },
              },
            ],
          },
          finishReason: "tool_calls",
        },
      },
    ],
  };
}

/** The same step as an OTLP export: `gen_ai.tool.definitions` offers the tool, the output message calls it. */
function toolSpanExport(uid: number, schema: Json, argument: Json) {
  const attr = (key: string, value: string) => ({ key, value: { stringValue: value } });
  const nanos = (ms: number) => `${BigInt(Date.parse(started) + ms) * 1_000_000n}`;
  return {
    resourceSpans: [
      {
        resource: { attributes: [attr("service.name", "attacker")] },
        scopeSpans: [
          {
            spans: [
              {
                traceId: uid.toString(16).padStart(32, "a"),
                spanId: uid.toString(16).padStart(16, "b"),
                name: "chat arc-small",
                kind: 3,
                startTimeUnixNano: nanos(0),
                endTimeUnixNano: nanos(900),
                attributes: [
                  attr("gen_ai.operation.name", "chat"),
                  attr("gen_ai.request.model", "arc-small"),
                  attr(
                    "gen_ai.tool.definitions",
                    JSON.stringify([{ type: "function", function: { name: "lookup", parameters: schema } }]),
                  ),
                  attr(
                    "gen_ai.output.messages",
                    JSON.stringify([
                      {
                        role: "assistant",
                        parts: [{ type: "tool_call", id: "call_1", name: "lookup", arguments: argument }],
                        finish_reason: "tool_call",
                      },
                    ]),
                  ),
                ],
              },
            ],
          },
        ],
      },
    ],
  };
}

/** A chat completion of the real embedded model, constrained by `schema` through `response_format` or `tools`. */
function chatBody(schema: Json, via: "response_format" | "tools", stream: boolean) {
  return {
    model: "arc",
    messages: [{ role: "user", content: "Where is order 12?" }],
    max_tokens: 8,
    stream,
    ...(via === "response_format"
      ? { response_format: { type: "json_schema", json_schema: { name: "answer", schema } } }
      : {
          tools: [{ type: "function", function: { name: "lookup", parameters: schema } }],
          tool_choice: "required",
        }),
  };
}

/** An attack, its value type kept inside. */
function attack<T>(spec: AttackSpec<T>): AttackSpec<unknown> {
  return spec as AttackSpec<unknown>;
}

/** Every attack the suite sends. */
export const ATTACKS: AttackSpec<unknown>[] = [
  attack({
    name: "a schema the gateway's model compiles into a grammar (response_format or tools with tool_choice required)",
    runs: 8,
    values: fc.record({
      attack: schemaAttack,
      via: fc.constantFrom("response_format" as const, "tools" as const),
      stream: fc.boolean(),
    }),
    describe: (v) => `${v.attack.label} in ${v.via}${v.stream ? ", streamed" : ""}`,
    requests: (v) => [
      {
        as: "engine",
        method: "POST",
        path: "/v1/chat/completions",
        body: chatBody(v.attack.schema, v.via, v.stream),
      },
    ],
  }),
  attack({
    name: "a tool schema and a call of it in an ingested trace (Arc's API or OTLP), checked by detection",
    runs: 8,
    values: fc.record({ attack: schemaAttack, via: fc.constantFrom("traces" as const, "otlp" as const) }),
    describe: (v) => `${v.attack.label} through ${v.via}`,
    requests: (v, uid) => [
      v.via === "traces"
        ? {
            as: "tenant",
            method: "POST",
            path: "/v1/traces",
            body: { traces: [toolTrace(`attack-${uid}`, v.attack.schema, v.attack.argument)] },
          }
        : {
            as: "tenant",
            method: "POST",
            path: "/v1/otlp/v1/traces",
            body: toolSpanExport(uid, v.attack.schema, v.attack.argument),
          },
    ],
    detect: true,
  }),
  attack({
    name: "a tool schema of a tenant's task family, checked by rewards and by detection",
    runs: 6,
    values: schemaAttack,
    describe: (v: SchemaAttack) => v.label,
    requests: (v: SchemaAttack, uid) => {
      const call = { tool: "lookup", args: v.argument };
      return [
        {
          as: "tenant",
          method: "PUT",
          path: "/v1/task-families/attack",
          body: { tools: [{ name: "lookup", parameters: v.schema }], verifier: {} },
        },
        {
          as: "tenant",
          method: "POST",
          path: "/v1/rewards",
          body: {
            items: [
              { env: "attack", question: "Where is order 12?", answer: JSON.stringify(call), solution: call },
            ],
          },
        },
        {
          as: "tenant",
          method: "POST",
          path: "/v1/traces",
          body: { traces: [toolTrace(`family-${uid}`, v.schema, v.argument, "attack")] },
        },
      ];
    },
    detect: true,
  }),
  attack({
    name: "one tenant's schema $id and another tenant's $ref to it (or its own schema of the same $id)",
    runs: 6,
    values: fc.record({ pair: idPair, own: fc.boolean() }),
    describe: (v: { pair: IdPair; own: boolean }) =>
      `$id ${v.pair.id} of the tenant, then ${v.own ? "the same $id" : "a $ref to it"} of another tenant`,
    requests: ({ pair, own }, uid) => [
      {
        as: "tenant",
        method: "POST",
        path: "/v1/traces",
        body: {
          traces: [
            toolTrace(
              `ida-${uid}`,
              { $id: pair.id, type: "object", properties: { x: { enum: [pair.secret] } }, required: ["x"] },
              { x: "not the secret" },
            ),
          ],
        },
      },
      {
        as: "bystander",
        method: "POST",
        path: "/v1/traces",
        body: {
          traces: [
            toolTrace(
              `idb-${uid}`,
              own
                ? {
                    $id: pair.id,
                    type: "object",
                    properties: { x: { enum: ["OWN-VALUE"] } },
                    required: ["x"],
                  }
                : { $ref: pair.id },
              { x: "another value" },
            ),
          ],
        },
      },
    ],
    detect: true,
    // the other tenant's verdict never shows the first tenant's schema; its own schema of the same $id is checked
    sealed: ({ pair, own }, uid) => [
      {
        as: "bystander",
        path: `/v1/verdicts?traceId=idb-${uid}`,
        secret: pair.secret,
        ...(own ? { mustHave: "OWN-VALUE" } : {}),
      },
      { as: "bystander", path: "/v1/patterns", secret: pair.secret },
    ],
  }),
];
