/**
 * Stands in for aws-xray-sdk-core in a function built with tracing off (lib/docrelay-function.ts aliases it here),
 * so the package is neither shipped nor parsed at cold start. Only the Tracer imports it, and observability.ts
 * loads the Tracer only when DOCRELAY_TRACING is `true`, which the construct sets exactly when it bundles the real one.
 */
const message =
  'aws-xray-sdk-core is not in this bundle: the function was built with tracing off (DocRelayProps.tracing)';

/** Throws on any use. */
const absent: unknown = new Proxy(
  {},
  {
    get: () => {
      throw new Error(message);
    },
  },
);

export default absent;
