/** Lambda entry point of the event-ingest function: the handler, built once per container. */
import { createObservability } from '../../commons/observability';
import { lambdaRuntime } from '../../wiring/lambda-runtime';
import { makeEventIngestHandler } from './make-handler';

export const handler = makeEventIngestHandler(lambdaRuntime(), createObservability('event-ingest'));
