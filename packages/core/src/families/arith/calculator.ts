import type { ToolResult, ToolSpec } from "../../tasks/tool-spec.ts";

/**
 * Evaluates an arithmetic expression of numbers, + - * /, unary minus and parentheses, with the usual
 * precedence. No `eval`: a small recursive-descent parser, so model output can never run code.
 */
export function evaluateExpression(expr: string): { ok: true; value: number } | { ok: false; error: string } {
  const tokens = expr.match(/\d+(?:\.\d+)?|[-+*/()]|\S/g) ?? [];
  let pos = 0;
  const fail = (message: string): never => {
    throw new SyntaxError(message);
  };
  const peek = (): string | undefined => tokens[pos];
  const primary = (): number => {
    const token = tokens[pos++];
    if (token === undefined) return fail("unexpected end of expression");
    if (token === "(") {
      const value = sum();
      if (tokens[pos++] !== ")") fail("expected )");
      return value;
    }
    if (token === "-") return -primary();
    if (/^\d/.test(token)) return Number(token);
    return fail(`unexpected ${JSON.stringify(token)}`);
  };
  const product = (): number => {
    let value = primary();
    while (peek() === "*" || peek() === "/") {
      const op = tokens[pos++];
      const right = primary();
      if (op === "/" && right === 0) fail("division by zero");
      value = op === "*" ? value * right : value / right;
    }
    return value;
  };
  const sum = (): number => {
    let value = product();
    while (peek() === "+" || peek() === "-") {
      const op = tokens[pos++];
      const right = product();
      value = op === "+" ? value + right : value - right;
    }
    return value;
  };
  try {
    if (tokens.length === 0) fail("empty expression");
    const value = sum();
    if (pos < tokens.length) fail(`unexpected ${JSON.stringify(tokens[pos])}`);
    return { ok: true, value };
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
}

/** `calc`: the calculator tool of the `arith` family. */
export const calculator: ToolSpec = {
  name: "calc",
  description: "Evaluate an arithmetic expression",
  parameters: {
    type: "object",
    properties: { expr: { type: "string", minLength: 1, maxLength: 64 } },
    required: ["expr"],
    additionalProperties: false,
  },
  execute(args): ToolResult {
    const result = evaluateExpression(String(args.expr));
    return result.ok ? { ok: true, value: { result: result.value } } : { ok: false, error: result.error };
  },
};
