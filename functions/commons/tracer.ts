/**
 * The Powertools Tracer in a module of its own, so observability.ts can `require()` it only when tracing is
 * on: esbuild runs a required module's imports (aws-xray-sdk-core among them) at its first require. Imported
 * here, it shares the bundle's one copy of @aws-lambda-powertools/commons.
 */
import { Tracer } from '@aws-lambda-powertools/tracer';

/** A Tracer for the service (captures the process's HTTP(S) requests, AWS SDK calls included). */
export const createTracer = (serviceName: string): Tracer => new Tracer({ serviceName });
