/** OTLP/JSON as exporters send it to `/v1/traces` (protobuf's JSON mapping: int64 as strings, ids as hex). */

/** One typed attribute value; exactly one field is set. */
export interface AnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: AnyValue[] };
  kvlistValue?: { values?: KeyValue[] };
  bytesValue?: string;
}

export interface KeyValue {
  key: string;
  value?: AnyValue;
}

export interface OtlpSpan {
  traceId?: string;
  spanId?: string;
  parentSpanId?: string;
  name?: string;
  kind?: number;
  startTimeUnixNano?: string | number;
  endTimeUnixNano?: string | number;
  attributes?: KeyValue[];
  status?: { code?: number; message?: string };
}

export interface ExportTraceServiceRequest {
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
