/**
 * Stands in for the Powertools Tracer (and its `/middleware`) in a function built with tracing off, as no-xray.ts
 * does for the X-Ray SDK. Neither export is ever reached: observability.ts creates a Tracer, and `traced` its
 * middleware, only when DOCRELAY_TRACING is `true`, which the construct sets exactly when it bundles the real package.
 */
const message =
  '@aws-lambda-powertools/tracer is not in this bundle: the function was built with tracing off (DocRelayProps.tracing)';

/** Throws: the Tracer is not bundled. */
export class Tracer {
  constructor() {
    throw new Error(message);
  }
}

/** Throws: the Tracer's middleware is not bundled. */
export function captureLambdaHandler(): never {
  throw new Error(message);
}
