/** Why a chat completion body is refused: OpenAI's `param` and `code`, and a message that names the field. */
export interface ChatRequestProblem {
  param: string;
  code: "invalid_type" | "invalid_value";
  message: string;
}

/** What a JSON value is, for messages: `null`, `an array`, `string`, `number`... */
const typeName = (value: unknown): string =>
  value === null ? "null" : Array.isArray(value) ? "an array" : typeof value;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const absent = (value: unknown): boolean => value === undefined || value === null;

/** Numeric parameters with OpenAI's ranges; token counts up to int32 (what model servers parse), seeds exact in JSON. */
const NUMBERS: [key: string, min: number, max: number, integer: boolean][] = [
  ["temperature", 0, 2, false],
  ["top_p", 0, 1, false],
  ["presence_penalty", -2, 2, false],
  ["frequency_penalty", -2, 2, false],
  ["n", 1, 128, true],
  ["max_tokens", 1, 2 ** 31 - 1, true],
  ["max_completion_tokens", 1, 2 ** 31 - 1, true],
  ["top_logprobs", 0, 20, true],
  ["seed", Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, true],
];

const STRINGS = ["model", "user"];
/** The longest `user`, as `POST /v1/traces` bounds a trace's userId. */
const MAX_USER = 256;
const BOOLEANS = ["stream", "logprobs", "parallel_tool_calls"];
const OBJECTS = ["stream_options", "response_format", "logit_bias", "metadata"];

function checkMessage(message: unknown, i: number): ChatRequestProblem | null {
  const at = `messages[${i}]`;
  if (!isObject(message)) {
    return {
      param: at,
      code: "invalid_type",
      message: `${at}: expected a message object, got ${typeName(message)}`,
    };
  }
  if (typeof message.role !== "string") {
    return {
      param: `${at}.role`,
      code: "invalid_type",
      message: `${at}.role: expected a string, got ${typeName(message.role)}`,
    };
  }
  const { content } = message;
  if (Array.isArray(content)) {
    for (let j = 0; j < content.length; j++) {
      const part = content[j];
      const partAt = `${at}.content[${j}]`;
      if (!isObject(part) || typeof part.type !== "string") {
        return {
          param: partAt,
          code: "invalid_type",
          message: `${partAt}: expected a content part object with a string type, got ${typeName(part)}`,
        };
      }
      if (part.type === "text" && typeof part.text !== "string") {
        return {
          param: `${partAt}.text`,
          code: "invalid_type",
          message: `${partAt}.text: expected a string, got ${typeName(part.text)}`,
        };
      }
    }
  } else if (!absent(content) && typeof content !== "string") {
    return {
      param: `${at}.content`,
      code: "invalid_type",
      message: `${at}.content: expected a string, an array of content parts or null, got ${typeName(content)}`,
    };
  }
  for (const key of ["name", "tool_call_id"]) {
    if (!absent(message[key]) && typeof message[key] !== "string") {
      return {
        param: `${at}.${key}`,
        code: "invalid_type",
        message: `${at}.${key}: expected a string, got ${typeName(message[key])}`,
      };
    }
  }
  return checkObjectList(message.tool_calls, `${at}.tool_calls`, "tool call");
}

function checkObjectList(value: unknown, param: string, what: string): ChatRequestProblem | null {
  if (absent(value)) return null;
  if (!Array.isArray(value)) {
    return {
      param,
      code: "invalid_type",
      message: `${param}: expected an array of ${what} objects, got ${typeName(value)}`,
    };
  }
  const bad = value.findIndex((item) => !isObject(item));
  if (bad < 0) return null;
  return {
    param: `${param}[${bad}]`,
    code: "invalid_type",
    message: `${param}[${bad}]: expected a ${what} object, got ${typeName(value[bad])}`,
  };
}

function checkStop(stop: unknown): ChatRequestProblem | null {
  if (absent(stop) || typeof stop === "string") return null;
  if (!Array.isArray(stop)) {
    return {
      param: "stop",
      code: "invalid_type",
      message: `stop: expected a string or an array of up to 4 strings, got ${typeName(stop)}`,
    };
  }
  if (stop.length > 4) {
    return {
      param: "stop",
      code: "invalid_value",
      message: `stop: expected up to 4 strings, got ${stop.length}`,
    };
  }
  const bad = stop.findIndex((s) => typeof s !== "string");
  if (bad < 0) return null;
  return {
    param: `stop[${bad}]`,
    code: "invalid_type",
    message: `stop[${bad}]: expected a string, got ${typeName(stop[bad])}`,
  };
}

/**
 * The first problem of a chat completion body (already a JSON object) that OpenAI would refuse with a 400, or null.
 * Checks shapes and ranges only, one pass over the messages and their parts without copying them: what a model
 * server supports beyond that (roles, part types, context length) is left to it.
 */
export function checkChatRequest(body: Record<string, unknown>): ChatRequestProblem | null {
  const { messages } = body;
  if (!Array.isArray(messages) || messages.length === 0) {
    return {
      param: "messages",
      code: "invalid_value",
      message: `messages: expected a non-empty array of chat messages, got ${Array.isArray(messages) ? "an empty array" : typeName(messages)}`,
    };
  }
  for (let i = 0; i < messages.length; i++) {
    const problem = checkMessage(messages[i], i);
    if (problem) return problem;
  }
  for (const [key, min, max, integer] of NUMBERS) {
    const value = body[key];
    if (absent(value)) continue;
    if (typeof value !== "number") {
      return {
        param: key,
        code: "invalid_type",
        message: `${key}: expected a number, got ${typeName(value)}`,
      };
    }
    if (!(value >= min && value <= max) || (integer && !Number.isInteger(value))) {
      return {
        param: key,
        code: "invalid_value",
        message: `${key}: expected ${integer ? "an integer" : "a number"} from ${min} to ${max}, got ${value}`,
      };
    }
  }
  for (const [keys, type, expected] of [
    [STRINGS, "string", "a string"],
    [BOOLEANS, "boolean", "true or false"],
  ] as const) {
    for (const key of keys) {
      if (!absent(body[key]) && typeof body[key] !== type) {
        return {
          param: key,
          code: "invalid_type",
          message: `${key}: expected ${expected}, got ${typeName(body[key])}`,
        };
      }
    }
  }
  if (typeof body.user === "string" && body.user.length > MAX_USER) {
    return {
      param: "user",
      code: "invalid_value",
      message: `user: expected at most ${MAX_USER} characters (it is the trace's userId), got ${body.user.length}`,
    };
  }
  for (const key of OBJECTS) {
    if (!absent(body[key]) && !isObject(body[key])) {
      return {
        param: key,
        code: "invalid_type",
        message: `${key}: expected an object, got ${typeName(body[key])}`,
      };
    }
  }
  return (
    checkStop(body.stop) ??
    checkObjectList(body.tools, "tools", "tool") ??
    checkObjectList(body.functions, "functions", "function")
  );
}
