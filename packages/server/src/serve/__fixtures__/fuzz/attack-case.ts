/**
 * One attack case: its requests sent while `/health` is probed without pause, then the detection of what they
 * queued. Every answer must come below 500 within the case's time bound, a refusal must say why, `/health` must keep
 * answering within the same bound, and another tenant must not read what the attacking tenant sent.
 */
import type { HostileServerState } from "../hostile-input-server.ts";
import type { AttackSpec, Sender } from "./attacks.ts";
import type { CaseOutcome } from "./counted-property.ts";
import { CASE_MS, unclearRefusal } from "./fuzz-case.ts";
import { ANSWER_MS, answerOf, Fatal, type FuzzedServer, healthy } from "./fuzzed-server.ts";

/** Pause between two `/health` probes while an attack runs. */
const PROBE_PAUSE_MS = 50;

/** Probes `/health` one request after another until stopped; resolves with the slowest and any failures. */
function probeHealth(url: string) {
  let stopped = false;
  let slowest = 0;
  let probes = 0;
  const failures: string[] = [];
  const loop = (async () => {
    while (!stopped) {
      const sent = performance.now();
      try {
        const { status } = await answerOf(`${url}/health`, {}, ANSWER_MS);
        if (status !== 200) failures.push(`/health answered ${status}`);
      } catch (error) {
        failures.push(`/health got no answer: ${(error as Error).message}`);
      }
      slowest = Math.max(slowest, performance.now() - sent);
      probes++;
      await new Promise((resolve) => setTimeout(resolve, PROBE_PAUSE_MS));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
    return { slowest, probes, failures };
  };
}

/**
 * Readies the server for attacks: what the routes' cases queued is judged (so that each attack's detection judges its
 * own traces), and the real model is loaded by one plain chat completion (so that no attack's time includes it).
 */
export async function prepareAttacks(server: FuzzedServer): Promise<void> {
  await server.call("detectAll", 120_000);
  const { status, text } = await answerOf(
    `${server.ready.url}/v1/chat/completions`,
    {
      method: "POST",
      headers: {
        authorization: `Bearer ${server.ready.engineTenant.key}`,
        "content-type": "application/json",
      },
      body: new TextEncoder().encode(
        JSON.stringify({ model: "arc", messages: [{ role: "user", content: "hi" }], max_tokens: 4 }),
      ),
    },
    120_000,
  );
  if (status !== 200)
    throw new Error(`the real model did not answer a plain chat completion: ${status} ${text}`);
}

let uids = 0;

/** Sends one attack case and checks its properties; throws an Error listing the problems (Fatal: server down). */
export async function runAttack(
  server: FuzzedServer,
  spec: AttackSpec<unknown>,
  value: unknown,
): Promise<CaseOutcome> {
  const { ready } = server;
  const uid = ++uids + 1_000_000;
  const keyOf = (as: Sender) =>
    as === "engine" ? ready.engineTenant.key : as === "bystander" ? ready.bystander.key : ready.tenant.key;
  const problems: string[] = [];
  const mark = server.mark();
  const fail = (fatal: boolean) => {
    const log = server.errorsSince(mark);
    const message = `${spec.describe(value)}\n    - ${problems.join("\n    - ")}${log ? `\n    server log: ${log}` : ""}`;
    return fatal ? new Fatal(message) : new Error(message);
  };
  server.lastState = undefined;
  server.idsChanged();
  const stopProbe = probeHealth(ready.url);
  let slowest = 0;
  let status = 0;
  for (const r of spec.requests(value, uid)) {
    const sent = performance.now();
    try {
      const answer = await answerOf(
        `${ready.url}${r.path}`,
        {
          method: r.method,
          headers: { authorization: `Bearer ${keyOf(r.as)}`, "content-type": "application/json" },
          body: new TextEncoder().encode(JSON.stringify(r.body)),
        },
        ANSWER_MS,
      );
      const ms = performance.now() - sent;
      slowest = Math.max(slowest, ms);
      status = Math.max(status, answer.status);
      const what = `${r.method} ${r.path}`;
      if (answer.status >= 500)
        problems.push(`${what} answered ${answer.status}: ${answer.text.slice(0, 300)}`);
      if (ms > CASE_MS) problems.push(`${what} answered after ${Math.round(ms)} ms, past ${CASE_MS} ms`);
      const unclear = unclearRefusal(r.path, answer);
      if (unclear) problems.push(`${what} ${unclear}`);
    } catch (error) {
      problems.push(
        `${r.method} ${r.path} got no answer within ${ANSWER_MS} ms: ${(error as Error).message}`,
      );
    }
  }
  if (spec.detect) {
    const detecting = performance.now();
    try {
      await server.call("detectAll");
    } catch (error) {
      problems.push((error as Error).message);
      await stopProbe();
      throw fail(true);
    }
    const ms = performance.now() - detecting;
    slowest = Math.max(slowest, ms);
    if (ms > CASE_MS) problems.push(`detecting what it queued took ${Math.round(ms)} ms, past ${CASE_MS} ms`);
  }
  const probe = await stopProbe();
  problems.push(...probe.failures.slice(0, 3));
  if (probe.slowest > CASE_MS)
    problems.push(
      `/health took ${Math.round(probe.slowest)} ms while the attack ran (${probe.probes} probes)`,
    );
  for (const check of spec.sealed?.(value, uid) ?? []) {
    const answer = await answerOf(
      `${ready.url}${check.path}`,
      { headers: { authorization: `Bearer ${keyOf(check.as)}` } },
      ANSWER_MS,
    ).catch((error: Error) => ({ status: 0, text: error.message }));
    if (answer.text.includes(check.secret))
      problems.push(`the ${check.as} read another tenant's ${check.secret} in GET ${check.path}`);
    if (check.mustHave && !(answer.status === 200 && answer.text.includes(check.mustHave)))
      problems.push(
        `GET ${check.path} answered ${answer.status} without ${check.mustHave}: ${answer.text.slice(0, 200)}`,
      );
  }
  const down = await healthy(server);
  if (down || !server.alive) {
    problems.push(down ?? "the server process exited");
    throw fail(true);
  }
  const { polluted } = await server.call<HostileServerState>("state").catch((error: Error) => {
    problems.push(error.message);
    throw fail(true);
  });
  if (polluted.length) problems.push(`polluted ${polluted.join(", ")}`);
  if (problems.length) throw fail(false);
  return { status, ms: Math.max(slowest, probe.slowest) };
}
