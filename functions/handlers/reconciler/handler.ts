/** Lambda entry point of the reconciler function: the handler, built once per container. */
import { createObservability } from '../../commons/observability';
import { lambdaRuntime } from '../../wiring/lambda-runtime';
import { makeReconcilerHandler } from './make-handler';

export const handler = makeReconcilerHandler(lambdaRuntime(), createObservability('reconciler'));
