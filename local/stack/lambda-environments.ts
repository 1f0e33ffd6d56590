/**
 * A function's execution environments in the local stack, kept as Lambda keeps them: each runs one invocation
 * at a time; an invocation takes an idle one (the most recently used first) or, when every one is busy, a new
 * one made by `create`. A Lambda handler may keep per-invocation state in objects it was built with, and
 * docrelay's do: Powertools' Metrics buffers an invocation's metrics until its end, and its Logger holds the
 * invocation's context and keys. One handler answering the local API's concurrent requests mixed them: one
 * request's end published (or, locally, dropped) another's metrics and Powertools warned "No application metrics
 * to publish" on the console for the other, and a request's log lines could carry another's request id.
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
