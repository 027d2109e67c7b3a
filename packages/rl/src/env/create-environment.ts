import type { Environment } from "@arc/core";
import { InvalidInputError, taskFamilies } from "@arc/core";
import { SessionEnvironment } from "./session-environment.ts";
import { SingleTurnEnvironment } from "./single-turn-environment.ts";

/**
 * A fresh environment for a registered family's env id: a session environment for a multi-turn family, else a
 * single-turn one. Environments hold one episode's state: make one per episode. Throws an InvalidInputError for an
 * unknown env or a family with no verifier (nothing could reward its episodes).
 */
export function createEnvironment(env: string): Environment {
  const family = taskFamilies.get(env);
  const verifier = family.verify;
  if (!verifier) {
    throw new InvalidInputError(
      `env: the ${JSON.stringify(env)} family has no verifier, so its episodes have no reward to train on`,
      { field: "env" },
    );
  }
  const session = family.session;
  return session
    ? new SessionEnvironment({ ...family, session }, verifier)
    : new SingleTurnEnvironment(family, verifier);
}
