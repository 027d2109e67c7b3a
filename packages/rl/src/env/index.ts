export { createEnvironment } from "./create-environment.ts";
export { OrderdeskEnvironment } from "./orderdesk-environment.ts";
export { SingleTurnEnvironment } from "./single-turn-environment.ts";
