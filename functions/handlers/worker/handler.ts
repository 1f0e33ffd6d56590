/** Lambda entry point of the worker function: the handler, built once per container. */
import { createObservability } from '../../commons/observability';
import { lambdaRuntime } from '../../wiring/lambda-runtime';
import { makeWorkerHandler } from './make-handler';

export const handler = makeWorkerHandler(lambdaRuntime(), createObservability('worker'));
