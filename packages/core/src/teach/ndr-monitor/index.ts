export { type NdrDecision, NdrMonitor, NdrMonitorConfig, type NdrMonitorConfigInput } from "./ndr-monitor.ts";
export { wilsonInterval } from "./wilson-interval.ts";
