export { type ChatCallContext, ChatGateway, type ChatGatewayDeps } from "./chat-gateway.ts";
export { type CompletionSummary, SseAccumulator, summarizeCompletion } from "./completion-summary.ts";
export { FAULT_INJECTED_OUTPUT, FaultInjectingEngine, FaultInjection } from "./fault-injecting-engine.ts";
export { type GatewayCall, gatewayTrace } from "./gateway-trace.ts";
export { embeddedBackend, type ModelBackend, upstreamBackend } from "./model-backend.ts";
export { ModelPool, type ModelPoolOptions } from "./model-pool.ts";
export { openAiError } from "./openai-error.ts";
export { type Route, type RouteChoice, RoutingTable } from "./routing-table.ts";
export { TraceRecorder, type TraceRecorderOptions } from "./trace-recorder.ts";
