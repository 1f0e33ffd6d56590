/**
 * The jobs API's lists and delivery lookup over the in-memory repository: jobs newest first, narrowed by
 * integration, status, since and delivery id, paged with an opaque cursor; a delivery with its jobs; the
 * query's mistakes answered as 400 problems that name the parameter.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { InMemoryJobRepository } from '../../../functions/adapters/memory/job-repository';
import { createObservability } from '../../../functions/commons/observability';
import { type DeliveryRecord, type JobRecord, newJobRecord } from '../../../functions/core/job';
import type { JobView } from '../../../functions/core/job-view';
import { makeJobsApiHandler, parseJobListQuery } from '../../../functions/handlers/jobs-api/make-handler';

const context = { functionName: 'jobs-api', awsRequestId: 'req-1' } as unknown as Context;

function event(
  path: string,
  pathParameters: Record<string, string> = {},
  query: Record<string, string> = {},
): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: `GET ${path}`,
    rawPath: path,
    rawQueryString: new URLSearchParams(query).toString(),
    headers: {},
    queryStringParameters: query,
    pathParameters,
    requestContext: { http: { method: 'GET', path }, requestId: 'r' },
    isBase64Encoded: false,
  } as unknown as APIGatewayProxyEventV2;
}

/** Three deliveries a minute apart: github d1 (two jobs), stripe d2, github d3 (failed). */
async function seeded(): Promise<InMemoryJobRepository> {
  const repo = new InMemoryJobRepository();
  const add = async (integration: string, deliveryId: string, minute: number, rules: string[]) => {
    const receivedAt = new Date(Date.UTC(2025, 5, 1, 12, minute)).toISOString();
    const jobs: JobRecord[] = rules.map((rule, i) =>
      newJobRecord(integration, deliveryId, receivedAt, Date.parse(receivedAt), {
        jobId: `job-${deliveryId}-${i}`,
        rule,
        templateId: 'tpl',
      }),
    );
    const delivery: DeliveryRecord = {
      integration,
      deliveryId,
      receivedAt,
      jobs: jobs.map((job) => ({ jobId: job.jobId, rule: job.rule, templateId: 'tpl' })),
      sealedPayload: 'sealed',
    };
    await repo.createDelivery(delivery, jobs);
  };
  await add('github', 'd1', 1, ['changelog', 'notes']);
  await add('stripe', 'd2', 2, ['invoice']);
  await add('github', 'd3', 3, ['changelog']);
  const failing = repo.jobs.get('job-d3-0') as JobRecord;
  repo.jobs.set(failing.jobId, { ...failing, status: 'failed', error: { code: 'X', message: 'no' } });
  return repo;
}

async function call(repo: InMemoryJobRepository, request: APIGatewayProxyEventV2) {
  const handler = makeJobsApiHandler(
    { jobs: repo, store: { presign: async (bucket, key) => `http://127.0.0.1/${bucket}/${key}` } },
    createObservability('jobs-api', { logLevel: 'SILENT' }),
  );
  const result = (await handler(request, context)) as APIGatewayProxyStructuredResultV2;
  return { status: result.statusCode, body: JSON.parse(result.body ?? '{}') as Record<string, unknown> };
}

const ids = (body: Record<string, unknown>): string[] => (body.jobs as JobView[]).map((job) => job.jobId);

describe('GET /v1/jobs', () => {
  it('lists jobs newest first', async () => {
    const answer = await call(await seeded(), event('/v1/jobs'));
    expect(answer.status).toBe(200);
    expect(ids(answer.body)).toEqual(['job-d3-0', 'job-d2-0', 'job-d1-1', 'job-d1-0']);
    expect(answer.body.cursor).toBeUndefined();
  });

  it('narrows by integration, status, since and delivery', async () => {
    const repo = await seeded();
    const list = async (query: Record<string, string>) =>
      ids((await call(repo, event('/v1/jobs', {}, query))).body);
    expect(await list({ integration: 'github' })).toEqual(['job-d3-0', 'job-d1-1', 'job-d1-0']);
    expect(await list({ status: 'failed' })).toEqual(['job-d3-0']);
    expect(await list({ status: 'queued', integration: 'github' })).toEqual(['job-d1-1', 'job-d1-0']);
    expect(await list({ since: '2025-06-01T12:02:00Z' })).toEqual(['job-d3-0', 'job-d2-0']);
    expect(await list({ delivery: 'd1' })).toEqual(['job-d1-1', 'job-d1-0']);
  });

  it('pages with the cursor it hands out, without repeating or skipping a job', async () => {
    const repo = await seeded();
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const answer = await call(repo, event('/v1/jobs', {}, { limit: '3', ...(cursor ? { cursor } : {}) }));
      seen.push(...ids(answer.body));
      cursor = answer.body.cursor as string | undefined;
    } while (cursor !== undefined);
    expect(seen).toEqual(['job-d3-0', 'job-d2-0', 'job-d1-1', 'job-d1-0']);
  });

  it.each([
    [{ status: 'lost' }, /status must be one of/],
    [{ limit: '0' }, /limit must be/],
    [{ limit: '101' }, /limit must be/],
    [{ since: 'yesterday' }, /since must be/],
    [{ since: '2026-02-30' }, /since must be a date that exists \(2026-02 has 28 days\)/],
    [{ since: '2026-13-01' }, /since must be/],
    [{ cursor: 'bm90IGEgY3Vyc29y' }, /cursor/],
    [{ colour: 'red' }, /Unknown parameter colour/],
  ])('answers %j with a 400 naming the mistake', async (query, detail) => {
    const answer = await call(await seeded(), event('/v1/jobs', {}, query as Record<string, string>));
    expect(answer.status).toBe(400);
    expect(answer.body.detail).toMatch(detail);
  });

  it('reads since as a time in any ISO 8601 form', () => {
    expect(parseJobListQuery({ since: '2025-06-01' })).toEqual({ since: '2025-06-01T00:00:00.000Z' });
    expect(parseJobListQuery({ since: '2025-06-01T14:00:00+02:00' })).toEqual({
      since: '2025-06-01T12:00:00.000Z',
    });
  });
});

describe('GET /v1/deliveries/{deliveryId}', () => {
  it('answers the delivery with its jobs', async () => {
    const answer = await call(await seeded(), event('/v1/deliveries/d1', { deliveryId: 'd1' }));
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ deliveryId: 'd1', integration: 'github' });
    expect(ids(answer.body).sort()).toEqual(['job-d1-0', 'job-d1-1']);
  });

  it('answers an unknown delivery with a 404 problem', async () => {
    const answer = await call(await seeded(), event('/v1/deliveries/nope', { deliveryId: 'nope' }));
    expect(answer.status).toBe(404);
    expect(answer.body.type).toBe('urn:docrelay:problem:unknown-delivery');
  });

  /** `seeded()`, plus one id received by github (minute 5) and by stripe (minute 6): the same bytes' hash. */
  async function shared(): Promise<InMemoryJobRepository> {
    const repo = await seeded();
    for (const [integration, minute] of [
      ['github', 5],
      ['stripe', 6],
    ] as const) {
      const receivedAt = new Date(Date.UTC(2025, 5, 1, 12, minute)).toISOString();
      const job = newJobRecord(integration, 'sha256:ab', receivedAt, Date.parse(receivedAt), {
        jobId: `job-${integration}-shared`,
        rule: 'r',
        templateId: 'tpl',
      });
      await repo.createDelivery(
        {
          integration,
          deliveryId: 'sha256:ab',
          receivedAt,
          jobs: [{ jobId: job.jobId, rule: 'r', templateId: 'tpl' }],
          sealedPayload: 'sealed',
        },
        [job],
      );
    }
    return repo;
  }
  const sharedEvent = (query: Record<string, string> = {}) =>
    event('/v1/deliveries/sha256:ab', { deliveryId: 'sha256:ab' }, query);

  it('answers an id several integrations received with 409, listing them, never one mixing their jobs', async () => {
    const answer = await call(await shared(), sharedEvent());
    expect(answer.status).toBe(409);
    expect(answer.body).toEqual({
      type: 'urn:docrelay:problem:ambiguous-delivery',
      title: 'Ambiguous delivery',
      status: 409,
      detail: expect.stringContaining('?integration='),
      integrations: ['stripe', 'github'],
    });
  });

  it('answers the delivery of the integration named by ?integration=, with its jobs only', async () => {
    const repo = await shared();
    for (const integration of ['github', 'stripe']) {
      const answer = await call(repo, sharedEvent({ integration }));
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ deliveryId: 'sha256:ab', integration });
      expect(ids(answer.body)).toEqual([`job-${integration}-shared`]);
    }
    const single = await call(
      repo,
      event('/v1/deliveries/d1', { deliveryId: 'd1' }, { integration: 'github' }),
    );
    expect(ids(single.body).sort()).toEqual(['job-d1-0', 'job-d1-1']);
  });

  it('answers 404 when the named integration has no such delivery, 400 for another parameter', async () => {
    const repo = await shared();
    expect((await call(repo, sharedEvent({ integration: 'shopify' }))).status).toBe(404);
    const other = await call(repo, sharedEvent({ integraton: 'github' }));
    expect(other.status).toBe(400);
    expect(other.body.detail).toBe('Unknown parameter integraton; known: integration.');
    expect((await call(repo, sharedEvent({ integration: ' ' }))).status).toBe(400);
  });
});
