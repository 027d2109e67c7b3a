import protobuf from "protobufjs/light.js";
import type { ExportTraceServiceRequest } from "./otlp-json.ts";

const repeated = (type: string, id: number) => ({ rule: "repeated", type, id });
const field = (type: string, id: number) => ({ type, id });
const KEY_VALUE = "opentelemetry.proto.common.v1.KeyValue";

/**
 * The OTLP trace messages Arc reads and writes (opentelemetry-proto: collector/trace/v1, trace/v1, resource/v1,
 * common/v1) and google.rpc.Status, as protobufjs descriptors. Field names are the camelCase of protobuf's JSON
 * mapping, so a decoded export has the shape of an OTLP/JSON one.
 */
const OTLP_DESCRIPTOR = {
  nested: {
    google: {
      nested: {
        rpc: { nested: { Status: { fields: { code: field("int32", 1), message: field("string", 2) } } } },
      },
    },
    opentelemetry: {
      nested: {
        proto: {
          nested: {
            common: {
              nested: {
                v1: {
                  nested: {
                    AnyValue: {
                      oneofs: {
                        value: {
                          oneof: [
                            "stringValue",
                            "boolValue",
                            "intValue",
                            "doubleValue",
                            "arrayValue",
                            "kvlistValue",
                            "bytesValue",
                          ],
                        },
                      },
                      fields: {
                        stringValue: field("string", 1),
                        boolValue: field("bool", 2),
                        intValue: field("int64", 3),
                        doubleValue: field("double", 4),
                        arrayValue: field("ArrayValue", 5),
                        kvlistValue: field("KeyValueList", 6),
                        bytesValue: field("bytes", 7),
                      },
                    },
                    ArrayValue: { fields: { values: repeated("AnyValue", 1) } },
                    KeyValueList: { fields: { values: repeated("KeyValue", 1) } },
                    KeyValue: { fields: { key: field("string", 1), value: field("AnyValue", 2) } },
                    InstrumentationScope: {
                      fields: {
                        name: field("string", 1),
                        version: field("string", 2),
                        attributes: repeated("KeyValue", 3),
                        droppedAttributesCount: field("uint32", 4),
                      },
                    },
                  },
                },
              },
            },
            resource: {
              nested: {
                v1: {
                  nested: {
                    Resource: {
                      fields: {
                        attributes: repeated(KEY_VALUE, 1),
                        droppedAttributesCount: field("uint32", 2),
                      },
                    },
                  },
                },
              },
            },
            trace: {
              nested: {
                v1: {
                  nested: {
                    ResourceSpans: {
                      fields: {
                        resource: field("opentelemetry.proto.resource.v1.Resource", 1),
                        scopeSpans: repeated("ScopeSpans", 2),
                        schemaUrl: field("string", 3),
                      },
                    },
                    ScopeSpans: {
                      fields: {
                        scope: field("opentelemetry.proto.common.v1.InstrumentationScope", 1),
                        spans: repeated("Span", 2),
                        schemaUrl: field("string", 3),
                      },
                    },
                    Span: {
                      fields: {
                        traceId: field("bytes", 1),
                        spanId: field("bytes", 2),
                        traceState: field("string", 3),
                        parentSpanId: field("bytes", 4),
                        flags: field("fixed32", 16),
                        name: field("string", 5),
                        kind: field("int32", 6),
                        startTimeUnixNano: field("fixed64", 7),
                        endTimeUnixNano: field("fixed64", 8),
                        attributes: repeated(KEY_VALUE, 9),
                        droppedAttributesCount: field("uint32", 10),
                        events: repeated("Event", 11),
                        droppedEventsCount: field("uint32", 12),
                        links: repeated("Link", 13),
                        droppedLinksCount: field("uint32", 14),
                        status: field("Status", 15),
                      },
                      nested: {
                        Event: {
                          fields: {
                            timeUnixNano: field("fixed64", 1),
                            name: field("string", 2),
                            attributes: repeated(KEY_VALUE, 3),
                            droppedAttributesCount: field("uint32", 4),
                          },
                        },
                        Link: {
                          fields: {
                            traceId: field("bytes", 1),
                            spanId: field("bytes", 2),
                            traceState: field("string", 3),
                            attributes: repeated(KEY_VALUE, 4),
                            droppedAttributesCount: field("uint32", 5),
                            flags: field("fixed32", 6),
                          },
                        },
                      },
                    },
                    Status: { fields: { message: field("string", 2), code: field("int32", 3) } },
                  },
                },
              },
            },
            collector: {
              nested: {
                trace: {
                  nested: {
                    v1: {
                      nested: {
                        ExportTraceServiceRequest: {
                          fields: {
                            resourceSpans: repeated("opentelemetry.proto.trace.v1.ResourceSpans", 1),
                          },
                        },
                        ExportTraceServiceResponse: {
                          fields: { partialSuccess: field("ExportTracePartialSuccess", 1) },
                        },
                        ExportTracePartialSuccess: {
                          fields: { rejectedSpans: field("int64", 1), errorMessage: field("string", 2) },
                        },
                      },
                    },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
};

const root = protobuf.Root.fromJSON(OTLP_DESCRIPTOR);
const RequestType = root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest");
const ResponseType = root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse");
const StatusType = root.lookupType("google.rpc.Status");

/** Why a protobuf body could not be read, for a 400 that names the problem. */
export class OtlpProtobufError extends Error {}

/**
 * Decodes an OTLP/HTTP protobuf export into the shape of its JSON encoding: camelCase fields, int64 as decimal
 * strings, ids and bytes as base64 (which the mapping reads like hex). Throws OtlpProtobufError for bytes that are
 * not an ExportTraceServiceRequest, nested past what the decoder's stack holds included.
 */
export function decodeOtlpTraces(bytes: Uint8Array): ExportTraceServiceRequest {
  try {
    const message = RequestType.decode(bytes);
    return RequestType.toObject(message, {
      longs: String,
      bytes: String,
      enums: Number,
    }) as ExportTraceServiceRequest;
  } catch (error) {
    const reason = error instanceof RangeError ? "nested too deeply" : (error as Error).message;
    throw new OtlpProtobufError(`not an OTLP ExportTraceServiceRequest in protobuf: ${reason}`);
  }
}

/** An ExportTraceServiceResponse: empty partial success, or the spans refused and why. */
export function encodeOtlpResponse(partialSuccess: {
  rejectedSpans?: number;
  errorMessage?: string;
}): Uint8Array<ArrayBuffer> {
  return new Uint8Array(ResponseType.encode(ResponseType.fromObject({ partialSuccess })).finish());
}

/** A google.rpc.Status, the body OTLP/HTTP protobuf gives a refused export. */
export function encodeRpcStatus(code: number, message: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(StatusType.encode(StatusType.fromObject({ code, message })).finish());
}
