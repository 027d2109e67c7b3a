/** OTLP/JSON as exporters send it to `/v1/traces` (protobuf's JSON mapping: int64 as strings, ids as hex). */

/** One typed attribute value; exactly one field is set. */
export interface AnyValue {
  /** A string. */
  stringValue?: string;
  /** A boolean. */
  boolValue?: boolean;
  /** An int64: a decimal string in protobuf's JSON mapping (some exporters send a number). */
  intValue?: string | number;
  /** A double. */
  doubleValue?: number;
  /** A list of values. */
  arrayValue?: { values?: AnyValue[] };
  /** A nested map of attributes. */
  kvlistValue?: { values?: KeyValue[] };
  /** Bytes, base64-encoded. */
  bytesValue?: string;
}

/** One attribute: a key (e.g. `gen_ai.request.model`) and its typed value. */
export interface KeyValue {
  /** The attribute name. */
  key: string;
  /** The value; absent means empty. */
  value?: AnyValue;
}

/** One span: becomes a trace step (its trace id the Arc trace id, its span id the step id). */
export interface OtlpSpan {
  /** 32 hex characters. */
  traceId?: string;
  /** 16 hex characters. */
  spanId?: string;
  /** The enclosing span, empty for a root span. */
  parentSpanId?: string;
  /** The operation, e.g. `chat gpt-4o` under the GenAI conventions. */
  name?: string;
  /** SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind?: number;
  /** Start time in nanoseconds since the Unix epoch (a decimal string, as int64 is in JSON). */
  startTimeUnixNano?: string | number;
  /** End time in nanoseconds since the Unix epoch. */
  endTimeUnixNano?: string | number;
  /** The span's attributes, where the GenAI conventions put model, messages and usage. */
  attributes?: KeyValue[];
  /** code 2 is an error (its message becomes the step's error); 0 unset, 1 ok. */
  status?: { code?: number; message?: string };
}

/** The body of an OTLP/HTTP JSON export to `/v1/traces`. */
export interface ExportTraceServiceRequest {
  /** Spans grouped by the resource (service) that emitted them, then by instrumentation scope. */
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: { scope?: { name?: string; version?: string }; spans?: OtlpSpan[] }[];
  }[];
}

/** Converts an OTLP AnyValue into plain JSON. */
export function plainValue(value: AnyValue | undefined): unknown {
  if (!value) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(plainValue);
  if (value.kvlistValue) return attributeMap(value.kvlistValue.values);
  if (value.bytesValue !== undefined) return value.bytesValue;
  return undefined;
}

/** Attributes as a plain object. */
export function attributeMap(attributes: KeyValue[] | undefined): Record<string, unknown> {
  const map: Record<string, unknown> = {};
  for (const kv of attributes ?? []) map[kv.key] = plainValue(kv.value);
  return map;
}
