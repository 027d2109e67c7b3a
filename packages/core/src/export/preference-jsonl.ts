import type { PreferenceRow } from "../synth/index.ts";

/**
 * Preference JSONL in the conversational `prompt`/`chosen`/`rejected` form DPO trainers read (TRL's
 * conversational preference format): `prompt` is the chat so far, verbatim (OpenAI messages: tool calls, tool
 * results, content parts), `chosen`/`rejected` one assistant message each, `tools` what the agent was offered;
 * `id` and `meta` (lineage: source trace ids, pattern, chosen source) ride along.
 */
export function toPreferenceJsonl(rows: readonly PreferenceRow[]): string {
  return rows
    .map(
      (r) =>
        `${JSON.stringify({
          prompt: r.prompt,
          chosen: [{ role: "assistant", content: r.chosen }],
          rejected: [{ role: "assistant", content: r.rejected }],
          ...(r.tools ? { tools: r.tools } : {}),
          id: r.id,
          meta: { env: r.env, ...r.meta },
        })}\n`,
    )
    .join("");
}
