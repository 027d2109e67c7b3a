export type { ArcLanguageModelMiddleware, MiddlewareSpecificationVersion } from "./ai-sdk/arc-middleware.ts";
export type { ArcOptions } from "./arc/arc-options.ts";
export { type Arc, createArc } from "./arc/create-arc.ts";
export type { FeedbackInput } from "./arc/feedback-record.ts";
export { ArcConfigError, ArcInputError, ArcSdkError } from "./errors/arc-sdk-error.ts";
export type { ExporterStats, FetchLike } from "./export/exporter.ts";
export type { OpenAILike } from "./openai/openai-shapes.ts";
export type { TraceHandle, TraceOptions, TraceUpdate } from "./trace/tracer.ts";
export type {
  WireFeedback,
  WireLlmCall,
  WireStep,
  WireStepError,
  WireToolCall,
  WireTrace,
  WireUsage,
} from "./wire/wire-types.ts";
