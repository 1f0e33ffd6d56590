/**
 * The worker's SQS → worker → SQS chain on AWS: Lambda's recursive loop detection must let it run (the job's
 * attempts cap and outage budget bound it), and no concurrency setting may send a job that never ran to the
 * dead-letter queue (a receive Lambda throttles counts toward the redrive's maxReceiveCount).
 */
import { LAMBDA_ENV } from '../../functions/config/lambda-env';
import { eventSourceConcurrency } from '../../lib/builders/functions';
import { THROTTLED_RECEIVE_HEADROOM } from '../../lib/builders/queues';
import { fixtureConfig, logicalId, synthStack } from './support';

/** The worker's function, its event source and the jobs queue, as synthesized. */
function workerChain(props: Parameters<typeof synthStack>[0] = {}, maxConcurrency?: number) {
  const config = fixtureConfig();
  const { stack, template } = synthStack(
    props,
    maxConcurrency === undefined ? config : { ...config, service: { ...config.service, maxConcurrency } },
  );
  const resources = template.toJSON().Resources;
  const mappings = Object.values(template.findResources('AWS::Lambda::EventSourceMapping'));
  expect(mappings).toHaveLength(1);
  return {
    worker: resources[logicalId(stack, stack.docRelay.workerFunction)].Properties,
    mapping: mappings[0]!.Properties,
    queue: resources[logicalId(stack, stack.docRelay.queue)].Properties,
    others: [
      stack.docRelay.ingestFunction,
      stack.docRelay.jobsApiFunction,
      stack.docRelay.reconcilerFunction,
    ].map((fn) => resources[logicalId(stack, fn)].Properties),
  };
}

describe('recursive loop detection', () => {
  test('the worker lets its SQS → worker → SQS chain run (RecursiveLoop: Allow); no other function does', () => {
    const { worker, others } = workerChain();
    expect(worker.RecursiveLoop).toBe('Allow');
    for (const fn of others) expect(fn.RecursiveLoop).toBeUndefined();
  });
});

describe('concurrency and receives', () => {
  // A reservation below service.maxConcurrency is a synth warning, which aws-cdk-lib prints as it synthesizes
  // (docrelay.test.ts asserts the warning itself).
  beforeEach(() => jest.spyOn(console, 'error').mockImplementation(() => undefined));
  afterEach(() => jest.restoreAllMocks());

  test('SQS dead-letters a job message only after the worker’s cap plus the throttle headroom', () => {
    const { worker, queue } = workerChain({ maxReceiveCount: 5 });
    expect(worker.Environment.Variables[LAMBDA_ENV.maxReceiveCount]).toBe('5');
    expect(queue.RedrivePolicy.maxReceiveCount).toBe(5 + THROTTLED_RECEIVE_HEADROOM);
    expect(THROTTLED_RECEIVE_HEADROOM).toBeGreaterThanOrEqual(8);
  });

  test('the redrive count stays within SQS’s 1000 with its whole headroom', () => {
    expect(workerChain({ maxReceiveCount: 984 }).queue.RedrivePolicy.maxReceiveCount).toBe(1000);
    expect(() => workerChain({ maxReceiveCount: 985 })).toThrow(/from 1 to 984/);
  });

  test.each([
    // [service.maxConcurrency, reserved, event source cap, reserved in the template]
    [3, undefined, 3, undefined],
    [4, 4, 4, 4],
    [6, 3, 3, 3],
    [4, 10, 4, 10],
    [1, undefined, 2, 1],
    [4, 1, 2, 1],
  ])(
    'maxConcurrency %p with reserved %p: the event source runs at most %p, reservation %p',
    (max, reserved, cap, inTemplate) => {
      const { worker, mapping } = workerChain(
        reserved === undefined ? {} : { functions: { worker: { reservedConcurrentExecutions: reserved } } },
        max,
      );
      expect(mapping.ScalingConfig).toEqual({ MaximumConcurrency: cap });
      expect(worker.ReservedConcurrentExecutions).toBe(inTemplate);
      // Never more pollers' invocations than the worker may run, except at SQS's floor of 2.
      if (inTemplate !== undefined && inTemplate >= 2) expect(cap).toBeLessThanOrEqual(inTemplate);
    },
  );

  test('eventSourceConcurrency keeps to SQS’s floor of 2', () => {
    expect([
      eventSourceConcurrency(1, undefined),
      eventSourceConcurrency(5, 1),
      eventSourceConcurrency(5, 2),
    ]).toEqual([2, 2, 2]);
  });
});
