/**
 * A function's execution environments in the local stack, kept as Lambda keeps them: each runs one invocation
 * at a time, so per-invocation state in a handler (Powertools' Metrics and Logger) is never shared by two
 * requests. Why: docs/decisions.md, "One Lambda execution environment per concurrent request".
 */
import type { Context } from 'aws-lambda';

/** An invocation of a handler, as the local stack makes it. */
export type Invoke<Event, Result> = (event: Event, context: Context) => Promise<Result>;

/** A function's environments behind one invoke; `size` is how many were made. */
export interface LambdaEnvironments<Event, Result> {
  readonly invoke: Invoke<Event, Result>;
  readonly size: () => number;
}

/**
 * Environments made by `create` on demand (nothing is made before the first invocation). They live as long as
 * this object: their number is the most invocations that ran at once, bounded by the local API's connections.
 */
export function lambdaEnvironments<Event, Result>(
  create: () => Invoke<Event, Result>,
): LambdaEnvironments<Event, Result> {
  const idle: Invoke<Event, Result>[] = [];
  let made = 0;
  return {
    invoke: async (event, context) => {
      let handler = idle.pop();
      if (handler === undefined) {
        handler = create();
        made += 1;
      }
      try {
        return await handler(event, context);
      } finally {
        idle.push(handler);
      }
    },
    size: () => made,
  };
}
