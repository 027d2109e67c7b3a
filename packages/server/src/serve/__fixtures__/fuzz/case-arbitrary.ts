/** The cases of a route as fast-check generates them: which valid request, and what in it is made hostile. */
import fc from "fast-check";
import {
  AUTHS,
  CONTENT_TYPES,
  GATEWAY_HEADERS,
  HEADER_VALUES,
  QUERY_KEYS,
  QUERY_VALUES,
  RAW_BODIES,
  RAW_QUERIES,
  READ_HEADERS,
  SEGMENTS,
} from "./hostile-values.ts";
import { type Mutation, mutationArb } from "./mutation.ts";
import type { RouteSpec } from "./route-spec.ts";

/** One request: a valid body (`variant`) mutated or replaced, its parameters, query, content type, headers, key. */
export interface Case {
  variant: number;
  params: ({ valid: number } | { hostile: number })[];
  body: { mutations: Mutation[] } | { raw: number } | { none: true };
  query: { pairs: { key: number; value: { hostile: number } | { valid: number } }[] } | { raw: number };
  contentType: number;
  headers: { name: number; value: number }[];
  /** Index into AUTHS: 0 is the route's own key. */
  auth: number;
}

/** The headers a route's cases may carry beside their key. */
export const headerNames = (route: RouteSpec) =>
  route.gateway ? GATEWAY_HEADERS : route.bodies ? [] : READ_HEADERS;

/** The cases of a route: writes mostly mutate a valid body; reads mostly vary their query, headers and key. */
export function caseArb(route: RouteSpec): fc.Arbitrary<Case> {
  const writes = route.bodies !== undefined;
  const param = fc.oneof(
    { weight: 3, arbitrary: fc.record({ valid: fc.nat() }) },
    { weight: 2, arbitrary: fc.record({ hostile: fc.nat(SEGMENTS.length - 1) }) },
  );
  const keys = (route.query ?? []).length + QUERY_KEYS.length;
  const pair = fc.record({
    key: fc.oneof(
      { weight: route.query?.length ? 4 : 0, arbitrary: fc.nat(Math.max(0, (route.query?.length ?? 1) - 1)) },
      { weight: 1, arbitrary: fc.nat(keys - 1) },
    ),
    value: fc.oneof(
      { weight: 3, arbitrary: fc.record({ hostile: fc.nat(QUERY_VALUES.length - 1) }) },
      { weight: 1, arbitrary: fc.record({ valid: fc.nat() }) },
    ),
  });
  const names = headerNames(route);
  return fc.record({
    variant: fc.nat(),
    params: fc.tuple(...(route.params ?? []).map(() => param)),
    body: writes
      ? fc.oneof(
          {
            weight: 16,
            arbitrary: fc.record({ mutations: fc.array(mutationArb, { minLength: 1, maxLength: 3 }) }),
          },
          { weight: 1, arbitrary: fc.record({ mutations: fc.constant([]) }) },
          { weight: 2, arbitrary: fc.record({ raw: fc.nat(RAW_BODIES.length - 1) }) },
        )
      : fc.oneof(
          { weight: 9, arbitrary: fc.constant({ none: true as const }) },
          { weight: 1, arbitrary: fc.record({ raw: fc.nat(RAW_BODIES.length - 1) }) },
        ),
    query: fc.oneof(
      { weight: writes ? 18 : 2, arbitrary: fc.constant({ pairs: [] }) },
      {
        weight: writes ? 1 : 6,
        arbitrary: fc.record({ pairs: fc.array(pair, { minLength: 1, maxLength: 3 }) }),
      },
      { weight: writes ? 1 : 2, arbitrary: fc.record({ raw: fc.nat(RAW_QUERIES.length - 1) }) },
    ),
    contentType: fc.oneof(
      { weight: 9, arbitrary: fc.constant(0) },
      { weight: 1, arbitrary: fc.integer({ min: 1, max: CONTENT_TYPES.length - 1 }) },
    ),
    headers: names.length
      ? fc.array(fc.record({ name: fc.nat(names.length - 1), value: fc.nat(HEADER_VALUES.length - 1) }), {
          maxLength: 2,
        })
      : fc.constant([]),
    auth: fc.oneof(
      { weight: writes ? 18 : 6, arbitrary: fc.constant(0) },
      { weight: 2, arbitrary: fc.integer({ min: 1, max: AUTHS.length - 1 }) },
    ),
  }) as fc.Arbitrary<Case>;
}
