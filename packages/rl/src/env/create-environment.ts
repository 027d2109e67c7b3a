import type { Environment } from "@arc/core";
import { arithFamily, InvalidInputError, toolcallFamily, verifyArith, verifyToolcall } from "@arc/core";
import { OrderdeskEnvironment } from "./orderdesk-environment.ts";
import { SingleTurnEnvironment } from "./single-turn-environment.ts";

/** A fresh environment for a built-in env id (`toolcall`, `arith`, `orderdesk`). Environments hold one episode's state: make one per episode. */
export function createEnvironment(env: string): Environment {
  switch (env) {
    case "toolcall":
      return new SingleTurnEnvironment(toolcallFamily, verifyToolcall);
    case "arith":
      return new SingleTurnEnvironment(arithFamily, verifyArith);
    case "orderdesk":
      return new OrderdeskEnvironment();
    default:
      throw new InvalidInputError(
        `env: expected one of toolcall, arith, orderdesk, got ${JSON.stringify(env)}`,
        { field: "env" },
      );
  }
}
