import { InvalidInputError } from "@arc/core";

/** OTLP/JSON as exporters send it to `/v1/traces` (protobuf's JSON mapping: int64 as strings, ids as hex). */

/** One typed attribute value; exactly one field is set. */
export interface AnyValue {
  /** A string. */
  stringValue?: string;
  /** A boolean. */
  boolValue?: boolean;
  /** An int64: a decimal string in protobuf's JSON mapping (some exporters send a number). */
  intValue?: string | number;
  /** A double; NaN and ±Infinity as the strings "NaN", "Infinity", "-Infinity" in protobuf's JSON mapping. */
  doubleValue?: number | string;
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

/** A value's JSON type, as a refusal names it. */
function typeName(value: unknown): string {
  if (value === null) return "null";
  return Array.isArray(value) ? "array" : typeof value;
}

/** Refuses a repeated field of the export's envelope that is present but not an array, naming its path. */
function checkRepeated(value: unknown, field: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    throw new InvalidInputError(
      `${field}: expected an array (OTLP/JSON writes a repeated field as an array), got ${typeName(value)}`,
      { field },
    );
  }
  return value;
}

/** Refuses an element of the export's envelope that is not an object, naming its path. */
function checkMessage(value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidInputError(`${field}: expected an object, got ${typeName(value)}`, { field });
  }
  return value as Record<string, unknown>;
}

/**
 * Checks the envelope of an OTLP/JSON export, which must decode as an ExportTraceServiceRequest: `resourceSpans`,
 * each one's `scopeSpans` and each scope's `spans` are arrays of objects (null or absent read as empty). An export
 * that does not is malformed, refused as a whole with an InvalidInputError naming the path (OTLP/HTTP answers such a
 * request 400); a span that is malformed is left to the mapping, which counts it in the partial success.
 */
export function checkExportShape(body: unknown): asserts body is ExportTraceServiceRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new InvalidInputError(
      `expected an OTLP ExportTraceServiceRequest, a JSON object with resourceSpans, got ${typeName(body)}`,
    );
  }
  const request = body as Record<string, unknown>;
  if (!Array.isArray(request.resourceSpans)) {
    throw new InvalidInputError(
      `resourceSpans: expected an array (an OTLP ExportTraceServiceRequest), got ${typeName(request.resourceSpans)}`,
      { field: "resourceSpans" },
    );
  }
  request.resourceSpans.forEach((resourceSpans, i) => {
    const resource = checkMessage(resourceSpans, `resourceSpans.${i}`);
    checkRepeated(resource.scopeSpans, `resourceSpans.${i}.scopeSpans`).forEach((scopeSpans, j) => {
      const scope = checkMessage(scopeSpans, `resourceSpans.${i}.scopeSpans.${j}`);
      checkRepeated(scope.spans, `resourceSpans.${i}.scopeSpans.${j}.spans`);
    });
  });
}

/** Converts an OTLP AnyValue into plain JSON; throws an InvalidInputError for a value of the wrong shape. */
export function plainValue(value: AnyValue | undefined): unknown {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "object")
    throw new InvalidInputError(`expected an AnyValue object, got ${typeof value}`);
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return intValueOf(value.intValue);
  if (value.doubleValue !== undefined) return doubleValueOf(value.doubleValue);
  if (value.arrayValue) return arrayOf(value.arrayValue.values, "arrayValue.values").map(plainValue);
  if (value.kvlistValue) return attributeMap(value.kvlistValue.values);
  if (value.bytesValue !== undefined) return value.bytesValue;
  return undefined;
}

/**
 * A double as JSON keeps it: a finite number as it is; NaN and ±Infinity (which protobuf carries and JSON cannot) as
 * protobuf's JSON mapping writes them, the strings "NaN", "Infinity" and "-Infinity".
 */
function doubleValueOf(value: number | string): number | string {
  return typeof value === "number" && !Number.isFinite(value) ? String(value) : value;
}

/** An int64 as a number: a decimal string or an integer; anything else is refused. */
function intValueOf(value: unknown): number {
  if (typeof value === "number" && Number.isInteger(value)) return value;
  if (typeof value === "string" && /^-?\d{1,20}$/.test(value)) return Number(value);
  throw new InvalidInputError(
    `intValue: expected an int64 as a decimal string, got ${JSON.stringify(value)}`,
  );
}

/** An optional repeated field: absent reads as empty, anything but an array is refused naming the field. */
export function arrayOf<T>(value: T[] | undefined | null, field: string): T[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new InvalidInputError(`${field}: expected an array, got ${typeof value}`);
  return value;
}

/** Attributes as a plain object with no prototype; throws an InvalidInputError for a malformed list. */
export function attributeMap(attributes: KeyValue[] | undefined): Record<string, unknown> {
  const map: Record<string, unknown> = Object.create(null);
  for (const kv of arrayOf(attributes, "attributes")) {
    if (typeof kv !== "object" || kv === null || typeof kv.key !== "string") {
      throw new InvalidInputError("attributes: expected {key, value} entries with a string key");
    }
    map[kv.key] = plainValue(kv.value);
  }
  return map;
}
