/**
 * Stands in for aws-xray-sdk-core in the bundle of a function built with tracing off: lib/docrelay-function.ts
 * aliases the package here, so its ~115 KB (with semver and cls-hooked) are neither shipped nor parsed at each
 * cold start. Only the Tracer imports it, and observability.ts requires the Tracer only when DOCRELAY_TRACING
 * is `true`, which the construct sets exactly when it bundles the real package.
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
