export { INJECTED_MODES, type InjectedMode, type SimulatedTurn } from "./injected-modes.ts";
export { type SimulatedTrace, simulateProductionTraffic, type TrafficOptions } from "./production-traffic.ts";
