import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** What the test server answers to one `POST /v1/chat/completions`. */
export interface ScriptedReply {
  /** The completion id (default `chatcmpl-test-<n>`); fix it to compare two answers deeply. */
  id?: string;
  /** The assistant's text (null for a pure tool-call answer). Default "ok". */
  content?: string | null;
  /** Tool calls the "model" makes. */
  toolCalls?: { id: string; name: string; arguments: string }[];
  /** Default "stop", or "tool_calls" when there are tool calls. */
  finishReason?: string;
  /** The model that "served" (default: the requested one with a `-served` suffix). */
  model?: string;
  systemFingerprint?: string;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  /** Characters per streamed content/arguments piece. Default 3. */
  pieceSize?: number;
  /** Answer with this HTTP error instead of a completion. */
  error?: { status: number; message: string; type?: string; code?: string };
  /** When streaming, send an error event after this many chunks instead of finishing. */
  streamErrorAfterChunks?: number;
}

/** One request to answer: its body, what the script says, its number and response headers, the response. */
interface Reply {
  body: Record<string, unknown>;
  script: ScriptedReply;
  n: number;
  headers: Record<string, string>;
  res: import("node:http").ServerResponse;
}

/** Answers with the scripted HTTP error, in OpenAI's error body. */
function refuse(
  res: import("node:http").ServerResponse,
  headers: Record<string, string>,
  error: NonNullable<ScriptedReply["error"]>,
): void {
  const { status, message, type = "invalid_request_error", code } = error;
  res.writeHead(status, { ...headers, "content-type": "application/json" });
  res.end(JSON.stringify({ error: { message, type, code: code ?? null, param: null } }));
}

/**
 * TEST DOUBLE of an OpenAI-compatible provider, for answers no real model gives on demand (given tool calls and
 * usage, HTTP and mid-stream errors) and for @arc/sdk's tests, which may not import `arc engine serve`
 * (test/import-direction.test.ts): a `node:http` server on 127.0.0.1 answering `POST /v1/chat/completions` as JSON
 * or as SSE chunks (`stream: true`), with tool calls, usage (`stream_options.include_usage`), a request id header,
 * and HTTP or mid-stream errors on demand; and `POST /v1/responses` (the Responses API) from the same script, as a
 * `response` object or as its stream of events.
 */
export class OpenAITestServer {
  /** Request bodies received, in order. */
  readonly requests: Record<string, unknown>[] = [];
  /** Decides the answer to each request body; replace it per test. */
  reply: (body: Record<string, unknown>) => ScriptedReply = () => ({});
  private served = 0;

  private constructor(
    private readonly server: Server,
    /** Base URL for the `openai` client's `baseURL`, e.g. `http://127.0.0.1:41234/v1`. */
    readonly url: string,
  ) {}

  /** Starts a server on a port the OS picks. */
  static async start(): Promise<OpenAITestServer> {
    let self: OpenAITestServer | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const route = req.method === "POST" ? req.url : undefined;
        if (route !== "/v1/chat/completions" && route !== "/v1/responses") {
          res.writeHead(404, { "content-type": "application/json" });
          res.end(
            JSON.stringify({ error: { message: `no route ${req.method} ${req.url}`, type: "not_found" } }),
          );
          return;
        }
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
        self!.requests.push(body);
        self!.respond(route, body, res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    self = new OpenAITestServer(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`);
    return self;
  }

  /** Stops listening and drops open connections. */
  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** Answers one request from the script: its HTTP error, else the route's answer. */
  private respond(
    route: string,
    body: Record<string, unknown>,
    res: import("node:http").ServerResponse,
  ): void {
    const n = ++this.served;
    const script = this.reply(body);
    const headers = { "x-request-id": `req-test-${n}` };
    if (script.error) refuse(res, headers, script.error);
    else if (route === "/v1/responses") this.answerResponses({ body, script, n, headers, res });
    else this.answer({ body, script, n, headers, res });
  }

  private answer({ body, script, n, headers, res }: Reply): void {
    const id = script.id ?? `chatcmpl-test-${n}`;
    const created = 1_700_000_000;
    const model = script.model ?? `${String(body.model)}-served`;
    const content = script.content === undefined ? "ok" : script.content;
    const toolCalls = script.toolCalls ?? [];
    const finishReason = script.finishReason ?? (toolCalls.length > 0 ? "tool_calls" : "stop");
    const usage = script.usage ?? { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 };
    const fingerprint = script.systemFingerprint ?? "fp_test";
    if (body.stream !== true) {
      const message: Record<string, unknown> = { role: "assistant", content, refusal: null };
      if (toolCalls.length > 0)
        message.tool_calls = toolCalls.map((c) => ({
          id: c.id,
          type: "function",
          function: { name: c.name, arguments: c.arguments },
        }));
      res.writeHead(200, { ...headers, "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id,
          object: "chat.completion",
          created,
          model,
          system_fingerprint: fingerprint,
          choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason }],
          usage,
        }),
      );
      return;
    }
    const includeUsage =
      (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
    const piece = script.pieceSize ?? 3;
    const deltas: Record<string, unknown>[] = [{ role: "assistant", content: "" }];
    for (let i = 0; content && i < content.length; i += piece)
      deltas.push({ content: content.slice(i, i + piece) });
    toolCalls.forEach((c, index) => {
      deltas.push({
        tool_calls: [{ index, id: c.id, type: "function", function: { name: c.name, arguments: "" } }],
      });
      for (let i = 0; i < c.arguments.length; i += piece)
        deltas.push({ tool_calls: [{ index, function: { arguments: c.arguments.slice(i, i + piece) } }] });
    });
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({
      id,
      object: "chat.completion.chunk",
      created,
      model,
      system_fingerprint: fingerprint,
      choices,
      ...(includeUsage ? { usage: null } : {}),
      ...extra,
    });
    const events = deltas.map((delta) => chunk([{ index: 0, delta, logprobs: null, finish_reason: null }]));
    events.push(chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: finishReason }]));
    if (includeUsage) events.push(chunk([], { usage }));
    res.writeHead(200, { ...headers, "content-type": "text/event-stream", "cache-control": "no-cache" });
    const limit = script.streamErrorAfterChunks ?? Number.POSITIVE_INFINITY;
    for (const [i, event] of events.entries()) {
      if (i === limit) {
        res.end(`data: ${JSON.stringify({ error: { message: "stream broke", type: "server_error" } })}\n\n`);
        return;
      }
      res.write(`data: ${JSON.stringify(event)}\n\n`);
    }
    res.end("data: [DONE]\n\n");
  }

  /** Answers a Responses API request from the script: a `response` object, or its events when streaming. */
  private answerResponses({ body, script, n, headers, res }: Reply): void {
    const id = script.id ?? `resp_test_${n}`;
    const content = script.content === undefined ? "ok" : script.content;
    const usage = script.usage ?? { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 };
    const output: Record<string, unknown>[] = [];
    if (content !== null) {
      output.push({
        type: "message",
        id: `msg_${n}`,
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text: content, annotations: [] }],
      });
    }
    for (const call of script.toolCalls ?? []) {
      output.push({
        type: "function_call",
        id: `fc_${call.id}`,
        call_id: call.id,
        name: call.name,
        arguments: call.arguments,
        status: "completed",
      });
    }
    const response = {
      id,
      object: "response",
      created_at: 1_700_000_000,
      status: "completed",
      model: script.model ?? `${String(body.model)}-served`,
      output,
      usage: {
        input_tokens: usage.prompt_tokens,
        output_tokens: usage.completion_tokens,
        total_tokens: usage.total_tokens,
      },
    };
    if (body.stream !== true) {
      res.writeHead(200, { ...headers, "content-type": "application/json" });
      res.end(JSON.stringify(response));
      return;
    }
    const piece = script.pieceSize ?? 3;
    const events: Record<string, unknown>[] = [
      { type: "response.created", response: { ...response, status: "in_progress", output: [], usage: null } },
    ];
    for (let i = 0; content && i < content.length; i += piece) {
      events.push({
        type: "response.output_text.delta",
        output_index: 0,
        content_index: 0,
        delta: content.slice(i, i + piece),
      });
    }
    events.push({ type: "response.completed", response });
    res.writeHead(200, { ...headers, "content-type": "text/event-stream", "cache-control": "no-cache" });
    for (const [i, event] of events.entries()) {
      res.write(`event: ${event.type}\ndata: ${JSON.stringify({ ...event, sequence_number: i })}\n\n`);
    }
    res.end();
  }
}
