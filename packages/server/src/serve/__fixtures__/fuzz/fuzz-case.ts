/**
 * One fuzz case run against the server: the request it makes, and the properties every case must keep, checked
 * against the server and its database.
 */
import type { IncomingHttpHeaders } from "node:http";
import type { HostileServerState } from "../hostile-input-server.ts";
import type { Case } from "./case-arbitrary.ts";
import { requestOf } from "./case-request.ts";
import type { CaseOutcome } from "./counted-property.ts";
import { ANSWER_MS, answerOf, Fatal, type FuzzedServer, healthy, NotSent } from "./fuzzed-server.ts";
import type { Auth } from "./hostile-values.ts";
import type { Ctx, Json, RouteSpec } from "./route-spec.ts";

/** A case answered (or, when ingested, detected) later than this broke its time bound; a hang is ANSWER_MS. */
export const CASE_MS = Number(process.env.ARC_FUZZ_CASE_MS ?? 5_000);
/** The fixture server's body limit. */
const MAX_BODY_BYTES = 1024 * 1024;

/** Why an answer to a request made with `auth` is wrong for its route, or null. */
function keyProblem(
  route: RouteSpec,
  request: { auth: Auth; validParams: boolean },
  answer: { status: number; headers: IncomingHttpHeaders },
): string | null {
  const { auth } = request;
  const kind = route.key ?? "tenant";
  if (kind === "none" || auth === "own" || auth === "admin for the tenant") return null;
  const { status } = answer;
  // refused before any key is looked at: a body over a limit, a request line and headers over Node's
  if (status === 431 || status === 413) return null;
  if (kind === "session") {
    if (auth !== "none" && auth !== "bearer hostile" && auth !== "basic") return null;
    // the sign-in page, or a refusal (a form from another origin is refused before the session is looked at)
    return (status === 303 && answer.headers.location === "/ui/login") || status >= 400
      ? null
      : `with no valid session answered ${status} ${answer.headers.location ?? ""}, not the way to /ui/login`;
  }
  if (auth === "none" || auth === "bearer hostile" || auth === "basic")
    return status === 401 ? null : `with no valid key answered ${status}, not 401`;
  if (auth === "other tenant" && kind === "admin")
    return status === 403 ? null : `with a tenant key answered ${status}, not 403`;
  if (auth === "other tenant" && route.owned && request.validParams && status < 300)
    return `another tenant's key got ${status} for this tenant's ${route.path}`;
  if (auth === "admin for a hostile tenant" && kind === "tenant" && status < 400)
    return `an admin key acting for a tenant that does not exist got ${status}`;
  return null;
}

/** Why a 4xx answer is not a clear refusal (an error object with a message), or null; the dashboard answers pages. */
export function unclearRefusal(path: string, answer: { status: number; text: string }): string | null {
  if (answer.status < 400 || answer.status >= 500 || path.startsWith("/ui")) return null;
  try {
    const message = (JSON.parse(answer.text) as { error?: { message?: unknown } }).error?.message;
    if (typeof message === "string" && message.trim()) return null;
  } catch {}
  return `refused with ${answer.status} but no {error: {message}}: ${answer.text.slice(0, 200)}`;
}

/** The connection's problem with sending a case (none when the server refused an upload it need not read). */
async function send(
  url: string,
  route: RouteSpec,
  request: { headers: Record<string, string>; bytes: Uint8Array | undefined },
  problems: string[],
): Promise<{ status: number; text: string; headers: IncomingHttpHeaders } | undefined> {
  const { headers, bytes } = request;
  try {
    return await answerOf(url, { method: route.method, headers, body: bytes }, ANSWER_MS);
  } catch (error) {
    const e = error as Error & { code?: string };
    // A server may refuse a body over its limit, or answer a read without reading its body, and close the
    // connection under the upload.
    const unread = (bytes?.byteLength ?? 0) > MAX_BODY_BYTES || (bytes !== undefined && !route.bodies);
    const refusedUpload = unread && /^(EPIPE|ECONNRESET)$/.test(e.code ?? "");
    if (!refusedUpload) {
      problems.push(
        e.name === "TimeoutError"
          ? `no answer within ${ANSWER_MS} ms`
          : `the connection failed: ${e.code} ${e.message}`,
      );
    }
    return undefined;
  }
}

/** What is wrong with an answer itself: a 5xx, a server path shown, a refusal without a message, the wrong key's. */
function answerProblems(
  route: RouteSpec,
  request: { path: string; auth: Auth; validParams: boolean },
  answer: { status: number; text: string; headers: IncomingHttpHeaders },
  serverPaths: string[],
): string[] {
  const problems: string[] = [];
  if (answer.status >= 500) problems.push(`answered ${answer.status}: ${answer.text.slice(0, 300)}`);
  for (const shown of serverPaths) {
    if (answer.status >= 400 && answer.text.includes(shown)) {
      problems.push(
        `refused with ${answer.status}, showing the server path ${shown}: ${answer.text.slice(0, 300)}`,
      );
    }
  }
  const unclear = unclearRefusal(request.path, answer);
  if (unclear) problems.push(unclear);
  const wrongKey = keyProblem(route, request, answer);
  if (wrongKey) problems.push(wrongKey);
  return problems;
}

/**
 * What is wrong with the rows a case changed (`delta`, by table): a refusal or a read that wrote, or a gateway call
 * answered but not recorded (`recorded`: the recorder's lost and dropped counts before and after).
 */
function rowProblems(
  route: RouteSpec,
  answer: { status: number; headers: IncomingHttpHeaders },
  delta: Record<string, number>,
  recorded: {
    before: { lost: number; dropped: number } | undefined;
    after: { lost: number; dropped: number } | undefined;
    headers: Record<string, string>;
  },
): string[] {
  const problems: string[] = [];
  // The gateway records every call a model took part in: the model's own answers (marked with the model version),
  // whatever their status, and its 5xx when the model failed (the 5xx is a problem of its own above).
  const forwarded = route.gateway && answer.headers["x-arc-model-version"] !== undefined;
  const recordedFailure = route.gateway && answer.status >= 500;
  const changed = Object.keys(delta).length > 0;
  if (answer.status >= 400 && !forwarded && !recordedFailure && changed) {
    problems.push(`refused with ${answer.status} but changed rows: ${JSON.stringify(delta)}`);
  } else if (route.method === "GET" && changed) {
    problems.push(`a read answered ${answer.status} and changed rows: ${JSON.stringify(delta)}`);
  }
  const { before, after, headers } = recorded;
  if (before && after && (forwarded || answer.status < 300)) {
    const lost = after.lost + after.dropped - before.lost - before.dropped;
    if (lost > 0) problems.push(`answered ${answer.status} but the gateway lost ${lost} trace(s)`);
    // With the SDK's step id (x-arc-step-id) a call is merged into that step: no new row is due then.
    else if (!delta.traces && !delta.steps && !headers["x-arc-step-id"]) {
      problems.push(`answered ${answer.status} but recorded no trace`);
    }
  }
  return problems;
}

/** The server's state and current ids before a case; a failure to read them means the case was never sent. */
async function stateBeforeCase(server: FuzzedServer, route: RouteSpec) {
  try {
    const state = server.lastState ?? (await server.call<HostileServerState>("state"));
    return { state, ids: await server.currentIds() };
  } catch (error) {
    throw new NotSent(`${route.method} ${route.path}, before the case\n    - ${(error as Error).message}`);
  }
}

/** An answer's body as JSON, or `{}` when it is not JSON. */
function jsonOrEmpty(text: string): Json {
  try {
    return JSON.parse(text) as Json;
  } catch {
    return {};
  }
}

/** What reading an accepted write back found wrong: a 5xx, a status other than the one a check must get, no answer. */
async function readBackProblems(
  read: (path: string) => Promise<{ status: number; text: string }>,
  checks: { path: string; must?: number }[],
): Promise<string[]> {
  const problems: string[] = [];
  for (const check of checks) {
    try {
      const got = await read(check.path);
      if (got.status >= 500 || (check.must && got.status !== check.must)) {
        problems.push(`then GET ${check.path} answered ${got.status}: ${got.text.slice(0, 200)}`);
      }
    } catch (error) {
      problems.push(`then GET ${check.path} got no answer (${(error as Error).message})`);
    }
  }
  return problems;
}

let uids = 0;

/**
 * Sends one case and checks every property; throws an Error listing the problems (a Fatal one if the server is
 * down). While shrinking, a case whose reads were already broken before it is passed untried (null): the state an
 * earlier case left must not be blamed on a smaller one.
 */
export async function runCase(
  server: FuzzedServer,
  route: RouteSpec,
  c: Case,
  shrinking: boolean,
): Promise<CaseOutcome | null> {
  const ready = server.ready;
  const { state: stateBefore, ids } = await stateBeforeCase(server, route);
  server.lastState = undefined;
  const x: Ctx = { ready, ids, uid: ++uids };
  const request = requestOf(route, c, x);
  const { path, params, bytes, sent, headers, what } = request;
  const readKey = route.key === "admin" ? ready.adminKey : ready.tenant.key;
  const read = (readPath: string) =>
    answerOf(`${ready.url}${readPath}`, { headers: { authorization: `Bearer ${readKey}` } }, ANSWER_MS);
  if (shrinking) {
    for (const check of route.readBack?.(x, sent, {}, params) ?? []) {
      const got = await read(check.path).catch(() => ({ status: 599 }));
      if (got.status >= 500) return null;
    }
  }
  const problems: string[] = [];
  const mark = server.mark();
  const fail = (fatal: boolean) => {
    const log = server.errorsSince(mark);
    const message = `${what}\n    - ${problems.join("\n    - ")}${log ? `\n    server log: ${log}` : ""}`;
    return fatal ? new Fatal(message) : new Error(message);
  };
  /** A fixture op whose failure (the database wedged) is this case's fatal problem. */
  const ipc = async <T>(op: string): Promise<T> => {
    try {
      return await server.call<T>(op);
    } catch (error) {
      problems.push((error as Error).message);
      throw fail(true);
    }
  };

  const recorded = route.gateway ? await ipc<{ lost: number; dropped: number }>("flush") : undefined;
  const sentAt = performance.now();
  const answer = await send(`${ready.url}${path}`, route, { headers, bytes }, problems);
  const answerMs = performance.now() - sentAt;
  let detectMs = 0;
  if (answer && answerMs > CASE_MS)
    problems.push(`answered after ${Math.round(answerMs)} ms, past ${CASE_MS} ms`);
  const down = await healthy(server);
  if (down) problems.push(`after the case ${down}`);
  if (!server.alive) {
    problems.push("the server process exited");
    throw fail(true);
  }
  if (answer) problems.push(...answerProblems(route, request, answer, ready.paths));

  const recordedAfter = route.gateway ? await ipc<{ lost: number; dropped: number }>("flush") : undefined;
  const stateAfter = await ipc<HostileServerState>("state");
  if (stateAfter.polluted.length)
    problems.push(`polluted ${stateAfter.polluted.join(", ")} (removed again to go on)`);
  // Down for a reason other than the pollution just removed: the server cannot be trusted any more.
  if (down && (await healthy(server))) throw fail(true);
  const delta: Record<string, number> = {};
  for (const [table, n] of Object.entries(stateAfter.counts)) {
    if (n !== stateBefore.counts[table]) delta[table] = n - stateBefore.counts[table];
  }
  if (Object.keys(delta).length > 0) server.idsChanged();
  if (answer)
    problems.push(...rowProblems(route, answer, delta, { before: recorded, after: recordedAfter, headers }));

  // what a write accepted is checked as its tenant reads it; a read or a write made with another key has no more
  const asTenant = request.auth === "own" || request.auth === "admin for the tenant";
  if (answer && answer.status < 300 && route.method !== "GET" && asTenant) {
    const json = jsonOrEmpty(answer.text);
    if (route.accepted) {
      const found = await route.accepted(x, sent, json, delta, server).catch((error: Error) => {
        problems.push(error.message);
        throw fail(true);
      });
      problems.push(...found);
    }
    problems.push(...(await readBackProblems(read, route.readBack?.(x, sent, json, params) ?? [])));
    if (route.ingest) {
      const detectStart = performance.now();
      await ipc("detect");
      detectMs = performance.now() - detectStart;
      if (detectMs > CASE_MS)
        problems.push(`its detection pass took ${Math.round(detectMs)} ms, past ${CASE_MS} ms`);
      server.idsChanged();
    }
    const downLater = await healthy(server);
    if (downLater) {
      problems.push(`after reading it back ${downLater}`);
      throw fail(true);
    }
  }
  if (problems.length) throw fail(false);
  // what the detection pass wrote is not in the state after; nothing else writes before the next case
  if (!(route.ingest && answer && answer.status < 300)) server.lastState = stateAfter;
  // the server's time on the case: its answer, or the detection pass of an accepted ingest
  return { status: answer?.status ?? 0, ms: Math.max(answerMs, detectMs) };
}
