/** Lambda entry point of the ingest function: the handler, built once per container. */
import { createObservability } from '../commons/observability';
import { lambdaRuntime } from '../runtime/lambda-runtime';
import { makeIngestHandler } from './make-handler';

export const handler = makeIngestHandler(lambdaRuntime(), createObservability('ingest'));
