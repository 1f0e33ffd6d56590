/** AWS mode without credentials: a clear message instead of "the job table could not read a job". */
import { awsSetupProblem } from '../../../bin/docrelay';

const credentialsError = (): Error => {
  const inner = new Error('Could not load credentials from any providers');
  inner.name = 'CredentialsProviderError';
  return new Error('the job table could not read a job', { cause: inner });
};

describe('awsSetupProblem', () => {
  it('names the fix for missing credentials anywhere in the cause chain', () => {
    expect(awsSetupProblem(credentialsError())).toMatch(/^no AWS credentials found: set AWS_PROFILE/);
  });

  it('names expired tokens and a missing region', () => {
    const expired = new Error('ExpiredTokenException: The security token included in the request is expired');
    expect(awsSetupProblem(expired)).toMatch(/have expired/);
    expect(awsSetupProblem(new Error('Region is missing'))).toMatch(/^no AWS region/);
  });

  it('leaves other errors alone', () => {
    expect(awsSetupProblem(new Error('no job x'))).toBeUndefined();
    expect(awsSetupProblem('text')).toBeUndefined();
  });
});
