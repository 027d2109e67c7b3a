import { setImmediate as nextTurn, setTimeout as sleep } from "node:timers/promises";

/**
 * A function to await between pieces of synchronous work (judging traces, verifying answers): once `ms` have run
 * since the last pause it pauses, so the requests the process is answering are served in between. The pause is one
 * turn of the event loop, or `rest(ran)` ms when that is more than 0 (`ran`: how long the slice ran), so work can take
 * a share of the time. Each piece must be bounded on its own (a tenant's schemas and patterns run within
 * SCHEMA_BOUNDS).
 */
export function timeSlicer(ms: number, rest: (ran: number) => number = () => 0): () => Promise<void> {
  let since = performance.now();
  return async () => {
    const ran = performance.now() - since;
    if (ran < ms) return;
    const pause = rest(ran);
    await (pause > 0 ? sleep(pause) : nextTurn());
    since = performance.now();
  };
}
