export {
  INJECTED_MODES,
  type InjectedMode,
  type SimulatedTrace,
  type SimulatedTurn,
  simulateProductionTraffic,
  type TrafficOptions,
} from "./simulate/index.ts";
export { type WaitUntilOptions, waitUntil } from "./wait-until.ts";
