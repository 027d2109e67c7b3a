import { taskFamilies } from "@arc/core";

/**
 * Scores a live answer when no reference answer exists (production): with the env's verifier and
 * no solution, an answer that fails a check (unparseable, wrong schema, a tool that errors) scores 0
 * and anything it cannot fault scores 1; without an env, an empty answer scores 0. This is the
 * NDR monitor's judge at run time: it sees breakage, not subtle wrongness.
 */
export function judgeLiveOutput(
  attempt: { answer: string | null; text: string },
  env: string | undefined,
): number {
  const output = attempt.answer ?? attempt.text;
  const verifier = env ? taskFamilies.verifier(env) : undefined;
  if (!verifier) return output.trim() === "" ? 0 : 1;
  return verifier({ outputs: [output] }).status === "fail" ? 0 : 1;
}
