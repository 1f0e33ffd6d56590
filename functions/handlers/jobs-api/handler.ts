/** Lambda entry point of the jobs-api function: the handler, built once per container. */
import { createObservability } from '../../commons/observability';
import { lambdaRuntime } from '../../wiring/lambda-runtime';
import { makeJobsApiHandler } from './make-handler';

export const handler = makeJobsApiHandler(lambdaRuntime(), createObservability('jobs-api'));
