/** The SQS wire format of a job message: what the worker accepts, and what it refuses as poison. */
import {
  decodeJobMessage,
  encodeJobMessage,
  InvalidJobMessageError,
} from '../../../../functions/adapters/sqs/job-message';

const refusal = (body: string): InvalidJobMessageError => {
  try {
    decodeJobMessage(body);
  } catch (error) {
    if (error instanceof InvalidJobMessageError) return error;
    throw error;
  }
  throw new Error(`accepted ${body}`);
};

describe('job messages', () => {
  it('decode to the job they were encoded for', () => {
    expect(decodeJobMessage(encodeJobMessage('job-1'))).toBe('job-1');
    expect(JSON.parse(encodeJobMessage('job-1'))).toEqual({ v: 1, jobId: 'job-1' });
  });

  it('refuse a body that is not JSON, without quoting it', () => {
    const error = refusal('{"v":1,"jobId":"secret-ish');
    expect(error.code).toBe('INVALID_JOB_MESSAGE');
    expect(error.message).toBe('the queue message is not a job message: not JSON');
  });

  it('refuse another version, extra keys and bad ids, naming at most three issues', () => {
    expect(refusal('{"v":2,"jobId":"a"}').message).toMatch(/v: /);
    expect(refusal('{"v":1,"jobId":"a","payload":{}}').message).toMatch(/payload|Unrecognized/);
    expect(refusal(JSON.stringify({ v: 1, jobId: 'x'.repeat(65) })).message).toMatch(/jobId: /);
    expect(refusal('[]').message).toMatch(/\(root\): /);
    const many = refusal('{"v":3,"jobId":7,"a":1,"b":2,"c":3}').message;
    expect(many.split('; ').length).toBeLessThanOrEqual(3);
  });
});
