import { Tracer } from '@aws-lambda-powertools/tracer';
import { createObservability, observed, traced } from '../../../functions/commons/observability';

describe('createObservability', () => {
  it('creates no Tracer and no tracing middleware when tracing is off (the default)', () => {
    const observability = createObservability('ingest', { logLevel: 'SILENT' });

    expect(observability.tracer).toBeUndefined();
    expect(traced(observability)).toEqual([]);
  });

  it('creates a Tracer for the service and the handler segment middleware when tracing is on', () => {
    const observability = createObservability('worker', {
      logLevel: 'SILENT',
      serviceName: 'prod-worker',
      tracing: true,
    });

    expect(observability.tracer).toBeInstanceOf(Tracer);
    const middlewares = traced(observability);
    expect(middlewares).toHaveLength(1);
    expect(middlewares[0]).toEqual(
      expect.objectContaining({ before: expect.any(Function), after: expect.any(Function) }),
    );
  });
});

describe('observed', () => {
  it('passes the Lambda settings that concern observability, tracing among them', () => {
    expect(
      observed({ metricsNamespace: 'docrelay/prod', serviceName: 'prod-ingest', tracing: true }),
    ).toEqual({
      metricsNamespace: 'docrelay/prod',
      serviceName: 'prod-ingest',
      tracing: true,
    });
    expect(observed({ tracing: false })).toEqual({});
  });
});
