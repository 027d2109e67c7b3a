import type { Task } from "../../rollout/index.ts";
import { createRng, deriveSeed, type Rng } from "../../tasks/rng.ts";
import {
  checkGenerateOptions,
  drawInSplit,
  type TaskGenerateOptions,
  taskId,
} from "../../tasks/task-family.ts";
import type { ToolCallJson } from "../../tasks/tool-spec.ts";

/** Where an order is in its life; the rules of what may be done depend on it. */
export type OrderStatus = "pending" | "shipped" | "delivered" | "cancelled" | "refunded";

/** One order of the desk's database, as `lookup_order` shows it (plus the address and any refund). */
export interface Order {
  id: string;
  status: OrderStatus;
  total: number;
  address: string;
  /** Amount refunded so far (0 until a refund). */
  refunded: number;
}

/** What the customer asked for. */
export type OrderRequest = { kind: "refund" } | { kind: "cancel" } | { kind: "address"; address: string };

/** What an `orderdesk` task expects: the order as it starts, the calls that serve the request, and the end state. */
export interface OrderdeskSolution {
  order: Order;
  request: OrderRequest;
  /** The right calls in order: `lookup_order`, then one action (`refund_order`, `cancel_order`, `change_address` or `decline`). */
  calls: ToolCallJson[];
  /** The order as it must be when the episode ends. */
  finalState: Order;
}

/** The desk's policy: refunds only once delivered, cancellation only while pending, address changes until delivered. */
export function allowedAction(order: Order, request: OrderRequest): ToolCallJson {
  const order_id = order.id;
  if (request.kind === "refund" && order.status === "delivered") {
    return { tool: "refund_order", args: { order_id, amount: order.total } };
  }
  if (request.kind === "cancel" && order.status === "pending")
    return { tool: "cancel_order", args: { order_id } };
  if (request.kind === "address" && (order.status === "pending" || order.status === "shipped")) {
    return { tool: "change_address", args: { order_id, address: request.address } };
  }
  return { tool: "decline", args: { order_id } };
}

/** The order after `action` is applied (unchanged for `decline`). */
export function applyAction(order: Order, action: ToolCallJson): Order {
  switch (action.tool) {
    case "refund_order":
      return { ...order, status: "refunded", refunded: Number(action.args.amount) };
    case "cancel_order":
      return { ...order, status: "cancelled" };
    case "change_address":
      return { ...order, address: String(action.args.address) };
    default:
      return { ...order };
  }
}

const TRAIN_ADDRESSES = ["12 Oak St", "4 Elm Rd", "88 Pine Ave", "7 Lake Dr"];
const PROD_ADDRESSES = ["301 Bay Blvd", "9 Hill Ct", "15 Rue Verte"];

function drawOrder(rng: Rng, prod: boolean, request: OrderRequest["kind"]): Order {
  const letter = rng.pick(["A", "B", "C", "D"]);
  const id = `${letter}${prod ? rng.int(1000, 9999) : rng.int(100, 999)}`;
  const eligible = rng.chance(0.7);
  const status: OrderStatus =
    request === "refund"
      ? eligible
        ? "delivered"
        : "shipped"
      : request === "cancel"
        ? eligible
          ? "pending"
          : "shipped"
        : eligible
          ? rng.pick(["pending", "shipped"] as const)
          : "delivered";
  return { id, status, total: rng.int(500, 20000) / 100, address: rng.pick(TRAIN_ADDRESSES), refunded: 0 };
}

function phrase(request: OrderRequest, id: string, prod: boolean, rng: Rng): string {
  const v = rng.int(0, 1);
  switch (request.kind) {
    case "refund":
      return prod
        ? [`I want my money back for order #${id}.`, `Refund order ${id}.`][v]
        : [`Refund order ${id}.`, `Please refund order ${id}.`][v];
    case "cancel":
      return prod
        ? [`Stop order #${id}, I don't need it.`, `Cancel order ${id}.`][v]
        : [`Cancel order ${id}.`, `Please cancel order ${id}.`][v];
    case "address":
      return prod
        ? [
            `Ship order #${id} to ${request.address} instead.`,
            `Change the address of order ${id} to ${request.address}.`,
          ][v]
        : [
            `Change the address of order ${id} to ${request.address}.`,
            `New address for order ${id}: ${request.address}.`,
          ][v];
  }
}

/** Generates `orderdesk` tasks: look an order up, then act on it by the desk's policy. */
export function generateOrderdeskTasks(options: TaskGenerateOptions): Task[] {
  checkGenerateOptions(options);
  const rng = createRng(deriveSeed(options.seed, `orderdesk:${options.split}`));
  const prod = options.split === "production";
  const drawTask = () => {
    const kind = rng.pick(
      prod
        ? (["refund", "cancel", "address", "address"] as const)
        : (["refund", "cancel", "address"] as const),
    );
    const request: OrderRequest =
      kind === "address" ? { kind, address: rng.pick(prod ? PROD_ADDRESSES : TRAIN_ADDRESSES) } : { kind };
    const order = drawOrder(rng, prod, kind);
    const action = allowedAction(order, request);
    const solution: OrderdeskSolution = {
      order,
      request,
      calls: [{ tool: "lookup_order", args: { order_id: order.id } }, action],
      finalState: applyAction(order, action),
    };
    return {
      question: phrase(request, order.id, prod, rng),
      solution,
      kind,
      status: order.status,
      action: action.tool,
    };
  };
  return Array.from({ length: options.count }, (_, i) => {
    const { question, solution, kind, status, action } = drawInSplit(options.split, drawTask);
    return {
      id: taskId("orderdesk", options.split, options.seed, i),
      env: "orderdesk",
      question,
      solution,
      meta: { split: options.split, request: kind, status, action },
    };
  });
}
