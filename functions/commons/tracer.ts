/**
 * The Powertools Tracer, in a module of its own so that observability.ts can `require()` it only when
 * tracing is on (esbuild bundles a required module behind a lazy initialiser: its imports, aws-xray-sdk-core
 * among them, run at the first require, not at load). Imported here, the Tracer resolves to the same ES
 * module build as the rest of Powertools, so the bundle holds one copy of @aws-lambda-powertools/commons.
 */
import { Tracer } from '@aws-lambda-powertools/tracer';

/** A Tracer for the service (captures the process's HTTP(S) requests, AWS SDK calls included). */
export const createTracer = (serviceName: string): Tracer => new Tracer({ serviceName });
