import type { Environment, Verifier } from "@arc/core";
import { InvalidInputError, taskFamilies, unknown } from "@arc/core";
import { SessionEnvironment } from "./session-environment.ts";
import { SingleTurnEnvironment } from "./single-turn-environment.ts";

/** The verdict of every answer of a family with no verifier: unknown, reward 0; a run's judge rewards it. */
const judgedOnly: Verifier = () => unknown("no verifier: the run's judge rewards this answer");

/**
 * A fresh environment for a registered family's env id: a session environment for a multi-turn family, else a
 * single-turn one. Environments hold one episode's state: make one per episode. A single-turn family with no
 * verifier (judge-only) gets `unknown` verdicts with reward 0, for a run whose judge rewards the answers (recipes
 * refuse any other reward for it). Throws an InvalidInputError for an unknown env, or a multi-turn family with no
 * verifier (its session needs each turn's verdict).
 */
export function createEnvironment(env: string): Environment {
  const family = taskFamilies.get(env);
  const session = family.session;
  if (!session) return new SingleTurnEnvironment(family, family.verify ?? judgedOnly);
  const verifier = family.verify;
  if (!verifier) {
    throw new InvalidInputError(
      `env: the ${JSON.stringify(env)} family has no verifier, so its multi-turn session cannot judge its turns`,
      { field: "env" },
    );
  }
  return new SessionEnvironment({ ...family, session }, verifier);
}
