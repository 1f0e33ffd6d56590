/** The jobs API entry point: `GET /v1/jobs/{jobId}` over the in-memory repository and store. */
import { InMemoryDocumentStore } from '../../../functions/adapters/memory/document-store';
import { InMemoryJobRepository } from '../../../functions/adapters/memory/job-repository';
import { DocrelayError } from '../../../functions/commons/errors';
import { type JobRecord, newJobRecord } from '../../../functions/core/job';
import { makeJobsApiHandler } from '../../../functions/handlers/jobs-api/make-handler';
import { apiEvent, lambdaContext, recordingObservability } from './support';

const NOW = Date.parse('2026-03-01T12:00:00.000Z');

const storedJob = (): JobRecord => ({
  ...newJobRecord('notes', 'd-1', '2026-03-01T11:59:00.000Z', NOW, {
    jobId: 'job-1',
    rule: 'invoice',
    templateId: '9001',
  }),
  status: 'stored',
  attempts: 1,
  document: { id: 'doc-1', name: 'Invoice', templateId: '9001', createdAt: 'x', linksExpireAt: 'y' },
  files: [
    {
      fileId: 'f-1',
      filename: 'invoice.pdf',
      mimeType: 'application/pdf',
      size: 10,
      bucket: 'documents',
      key: 'notes/invoice.pdf',
      sha256: 'ab'.repeat(32),
      storedSize: 10,
      storedAt: 'z',
    },
  ],
});

function setup() {
  const jobs = new InMemoryJobRepository({ now: () => NOW });
  const store = new InMemoryDocumentStore('documents');
  const observability = recordingObservability('jobs-api');
  const handler = makeJobsApiHandler({ jobs, store }, observability);
  const invoke = async (jobId: string, method = 'GET') => {
    const response = await handler(
      apiEvent({
        method,
        routeKey: 'GET /v1/jobs/{jobId}',
        path: `/v1/jobs/${jobId}`,
        pathParameters: { jobId },
      }),
      lambdaContext('docrelay-jobs-api'),
    );
    return { ...response, json: JSON.parse(String(response.body)) as Record<string, unknown> };
  };
  return { jobs, observability, invoke };
}

describe('jobs API handler', () => {
  it('shows a job with a presigned link to each stored file', async () => {
    const { jobs, invoke } = setup();
    await jobs.ensureJobs([storedJob()]);
    const response = await invoke('job-1');
    expect(response.statusCode).toBe(200);
    expect(response.json).toMatchObject({
      jobId: 'job-1',
      status: 'stored',
      document: { id: 'doc-1', name: 'Invoice', templateId: '9001' },
      files: [
        {
          bucket: 'documents',
          key: 'notes/invoice.pdf',
          downloadUrl: 'memory://documents/notes%2Finvoice.pdf?expires=3600',
        },
      ],
    });
  });

  it.each(['missing', 'job_1', 'a/b', 'x'.repeat(65), ''])('answers 404 for the job id %p', async (jobId) => {
    const { observability, invoke } = setup();
    const response = await invoke(jobId);
    expect(response.statusCode).toBe(404);
    expect(response.json).toMatchObject({ type: 'urn:docrelay:problem:unknown-job', title: 'Unknown job' });
    expect(observability.lines.at(-1)).toMatchObject({ level: 'warn', message: 'job request refused' });
  });

  it('refuses another method with 405 and an Allow header', async () => {
    const { invoke } = setup();
    const response = await invoke('job-1', 'DELETE');
    expect(response.statusCode).toBe(405);
    expect(response.headers).toMatchObject({ allow: 'GET' });
  });

  it('answers 503 when the table is unavailable, logging the job id and code', async () => {
    const { jobs, observability, invoke } = setup();
    jobs.failNext('getJob', new DocrelayError('JOB_STORE_UNAVAILABLE', 'down', { retryable: true }));
    const response = await invoke('job-1');
    expect(response.statusCode).toBe(503);
    expect(observability.lines.at(-1)).toEqual({
      level: 'error',
      message: 'job read failed',
      fields: { jobId: 'job-1', status: 503, code: 'JOB_STORE_UNAVAILABLE', error: 'DocrelayError' },
    });
  });
});
