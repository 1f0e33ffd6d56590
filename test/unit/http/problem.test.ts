/** Errors to HTTP in one place: problem+json answers that say what is wrong, or nothing internal. */
import { DocrelayError } from '../../../functions/commons/errors';
import { DeliveryRefusedError, type RefusalReason } from '../../../functions/core/errors';
import {
  errorResponse,
  isClientError,
  jsonResponse,
  ProblemError,
  problemResponse,
  problemType,
} from '../../../functions/http/problem';
import { problemErrors } from '../../../functions/http/problem-middleware';
import { SignatureError } from '../../../functions/senders';
import { recordingObservability } from '../handlers/support';

const body = (response: { body: string }) => JSON.parse(response.body) as Record<string, unknown>;

describe('errorResponse', () => {
  it.each<[RefusalReason, number, string]>([
    ['unknown-integration', 404, 'Unknown integration'],
    ['payload-too-large', 413, 'Payload too large'],
    ['unsupported-media-type', 415, 'Unsupported media type'],
    ['malformed-body', 400, 'Malformed body'],
    ['unprocessable-payload', 400, 'Payload cannot be processed'],
  ])('answers the refusal %s with %i', (reason, status, title) => {
    const response = errorResponse(new DeliveryRefusedError(reason, `why ${reason}`));
    expect(response.statusCode).toBe(status);
    expect(response.headers).toEqual({ 'content-type': 'application/problem+json' });
    expect(body(response)).toEqual({ type: problemType(reason), title, status, detail: `why ${reason}` });
  });

  it('answers a bad signature and a stale timestamp with 401, each with its own type', () => {
    expect(
      body(errorResponse(new SignatureError('SIGNATURE_INVALID', 'x-signature does not match'))),
    ).toEqual({
      type: 'urn:docrelay:problem:invalid-signature',
      title: 'Missing or invalid signature',
      status: 401,
      detail: 'x-signature does not match',
    });
    expect(body(errorResponse(new SignatureError('TIMESTAMP_STALE', 'older than 300 s')))).toMatchObject({
      type: 'urn:docrelay:problem:stale-timestamp',
      title: 'Stale or future timestamp',
      status: 401,
    });
  });

  it("answers an entry point's own problem with its status and headers", () => {
    const response = errorResponse(
      new ProblemError(405, 'method-not-allowed', 'Method not allowed', 'Use POST.', { allow: 'POST' }),
    );
    expect(response).toEqual(
      problemResponse(405, 'method-not-allowed', 'Method not allowed', 'Use POST.', { allow: 'POST' }),
    );
    expect(response.headers).toEqual({ 'content-type': 'application/problem+json', allow: 'POST' });
  });

  it('answers a retryable failure with 503 and Retry-After, without its message', () => {
    const response = errorResponse(
      new DocrelayError('QUEUE_UNAVAILABLE', 'https://sqs/internal-queue down', { retryable: true }),
    );
    expect(response.statusCode).toBe(503);
    expect(response.headers['retry-after']).toBe('5');
    expect(response.body).not.toContain('internal-queue');
  });

  it.each([
    new DocrelayError('CONFIG_BROKEN', 'secret path /x/y'),
    new Error('stack at /var/task'),
    'a string',
    undefined,
  ])('answers anything else (%p) with a generic 500', (error) => {
    const response = errorResponse(error);
    expect(body(response)).toEqual({
      type: 'urn:docrelay:problem:internal-error',
      title: 'Internal error',
      status: 500,
      detail: 'docrelay failed to handle the request.',
    });
  });
});

describe('isClientError and jsonResponse', () => {
  it('counts refusals, bad signatures and own problems as the caller’s, nothing else', () => {
    expect(isClientError(new DeliveryRefusedError('malformed-body', 'x'))).toBe(true);
    expect(isClientError(new SignatureError('SIGNATURE_MISSING', 'x'))).toBe(true);
    expect(isClientError(new ProblemError(404, 'unknown-job', 'Unknown job', 'x'))).toBe(true);
    expect(isClientError(new DocrelayError('QUEUE_UNAVAILABLE', 'x', { retryable: true }))).toBe(false);
    expect(isClientError(new Error('x'))).toBe(false);
  });

  it('writes a JSON answer with extra headers', () => {
    expect(jsonResponse(202, { ok: true }, { 'x-extra': '1' })).toEqual({
      statusCode: 202,
      headers: { 'content-type': 'application/json', 'x-extra': '1' },
      body: '{"ok":true}',
    });
  });
});

describe('problemErrors middleware', () => {
  const run = async (error: unknown, options: Parameters<typeof problemErrors>[1]) => {
    const observability = recordingObservability('unit');
    const middleware = problemErrors(observability, options);
    const request = { event: { id: 'e' }, context: {}, error, response: undefined, internal: {} };
    await middleware.onError?.(request as unknown as Parameters<NonNullable<typeof middleware.onError>>[0]);
    return { observability, response: request.response as unknown as { statusCode: number } };
  };

  it('logs a refusal as a warning without counting it when no metric is named', async () => {
    const { observability, response } = await run(new DeliveryRefusedError('malformed-body', 'bad json'), {
      refused: 'refused',
      failed: 'failed',
    });
    expect(response.statusCode).toBe(400);
    expect(observability.lines).toEqual([
      { level: 'warn', message: 'refused', fields: { status: 400, code: 'DELIVERY_MALFORMED_BODY' } },
    ]);
    expect(observability.points).toEqual([]);
  });

  it('logs a failure by code and error class, with the request fields, and counts it', async () => {
    const { observability, response } = await run('thrown string', {
      refused: 'refused',
      failed: 'failed',
      failedMetric: 'Errors',
      fields: (event) => ({ id: (event as { id: string }).id }),
    });
    expect(response.statusCode).toBe(500);
    expect(observability.lines).toEqual([
      {
        level: 'error',
        message: 'failed',
        fields: { id: 'e', status: 500, code: 'INTERNAL', error: 'unknown' },
      },
    ]);
    expect(observability.metricNames()).toEqual(['Errors']);
  });
});
