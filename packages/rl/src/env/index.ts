export { createEnvironment } from "./create-environment.ts";
export { SessionEnvironment } from "./session-environment.ts";
export { SingleTurnEnvironment } from "./single-turn-environment.ts";
