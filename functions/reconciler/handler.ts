/** Lambda entry point of the reconciler function: the handler, built once per container. */
import { createObservability } from '../commons/observability';
import { lambdaRuntime } from '../runtime/lambda-runtime';
import { makeReconcilerHandler } from './make-handler';

export const handler = makeReconcilerHandler(lambdaRuntime(), createObservability('reconciler'));
