/** The one module that reads environment variables: local settings and a Lambda function's settings. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readLambdaSettings, readLocalSettings } from '../../../functions/commons/env';
import { LAMBDA_ENV } from '../../../functions/config/lambda-env';

describe('readLocalSettings', () => {
  it('gives the defaults product-spec.md lists, resolved against the working directory', () => {
    expect(readLocalSettings({}, '/srv/app')).toEqual({
      port: 3000,
      configPath: '/srv/app/config/docrelay.yaml',
      docgenBaseUrl: undefined,
      docgenApiKey: undefined,
      secretsFile: '/srv/app/.docrelay/secrets.json',
      dataDir: '/srv/app/.docrelay',
    });
  });

  it('reads each variable, trimmed, and puts the secrets file in the data directory by default', () => {
    const settings = readLocalSettings(
      {
        PORT: ' 8080 ',
        DOCRELAY_CONFIG: 'other.yaml',
        DOCGEN_BASE_URL: 'http://127.0.0.1:9000',
        DOCGEN_API_KEY: ' key ',
        DOCRELAY_DATA_DIR: '/data',
      },
      '/srv/app',
    );
    expect(settings).toEqual({
      port: 8080,
      configPath: '/srv/app/other.yaml',
      docgenBaseUrl: 'http://127.0.0.1:9000',
      docgenApiKey: 'key',
      secretsFile: '/data/secrets.json',
      dataDir: '/data',
    });
    expect(readLocalSettings({ DOCRELAY_SECRETS_FILE: 's.json', PORT: '' }, '/srv').secretsFile).toBe(
      '/srv/s.json',
    );
  });

  it("matches the README's table of local variables, the secrets file's default included", () => {
    const readme = readFileSync(join(__dirname, '../../../README.md'), 'utf8').split('\n');
    const defaultOf = (name: string): string | undefined =>
      readme.find((line) => line.startsWith(`| \`${name}\``))?.split(' | ')[1];
    const settings = readLocalSettings({ DOCRELAY_DATA_DIR: '/data' }, '/srv/app');
    expect(defaultOf('PORT')).toBe(`\`${settings.port}\``);
    expect(defaultOf('DOCRELAY_CONFIG')).toBe('`config/docrelay.yaml`');
    expect(defaultOf('DOCRELAY_DATA_DIR')).toBe('`.docrelay/`');
    expect(defaultOf('DOCRELAY_SECRETS_FILE')).toBe('`<DOCRELAY_DATA_DIR>/secrets.json`');
    expect(settings.secretsFile).toBe('/data/secrets.json');
  });

  it.each(['http', '-1', '65536', '1.5'])('refuses PORT=%p', (port) => {
    expect(() => readLocalSettings({ PORT: port }, '/srv')).toThrow(
      `PORT must be a port number (0-65535), got "${port}"`,
    );
  });
});

describe('readLambdaSettings', () => {
  const required = {
    [LAMBDA_ENV.tableName]: 'jobs',
    [LAMBDA_ENV.queueUrl]: 'https://sqs/jobs',
    [LAMBDA_ENV.dlqUrl]: 'https://sqs/dlq',
    [LAMBDA_ENV.bucket]: 'documents',
  };

  it('reads the required settings and fills in the defaults', () => {
    expect(readLambdaSettings(required)).toEqual({
      configPath: 'docrelay.config.json',
      tableName: 'jobs',
      queueUrl: 'https://sqs/jobs',
      dlqUrl: 'https://sqs/dlq',
      bucket: 'documents',
      eventBusName: undefined,
      deployment: undefined,
      sealingSecretName: 'docrelay/sealing-key',
      maxReceiveCount: 8,
      leaseSeconds: 900,
      metricsNamespace: undefined,
      serviceName: undefined,
      tracing: false,
    });
  });

  it('reads the optional settings the construct sets', () => {
    expect(
      readLambdaSettings({
        ...required,
        [LAMBDA_ENV.configPath]: '/opt/config.json',
        [LAMBDA_ENV.eventBusName]: 'bus',
        [LAMBDA_ENV.deployment]: 'DocRelay-prod',
        [LAMBDA_ENV.sealingSecretName]: 'prod/sealing',
        [LAMBDA_ENV.maxReceiveCount]: '5',
        [LAMBDA_ENV.leaseSeconds]: '120',
        [LAMBDA_ENV.metricsNamespace]: 'docrelay-prod',
        [LAMBDA_ENV.serviceName]: 'docrelay-worker',
        [LAMBDA_ENV.tracing]: 'true',
      }),
    ).toMatchObject({
      configPath: '/opt/config.json',
      eventBusName: 'bus',
      deployment: 'DocRelay-prod',
      sealingSecretName: 'prod/sealing',
      maxReceiveCount: 5,
      leaseSeconds: 120,
      metricsNamespace: 'docrelay-prod',
      serviceName: 'docrelay-worker',
      tracing: true,
    });
  });

  it('leaves tracing off unless the construct turned it on', () => {
    for (const value of [undefined, '', 'false', 'TRUE', '1']) {
      expect(readLambdaSettings({ ...required, [LAMBDA_ENV.tracing]: value }).tracing).toBe(false);
    }
  });

  it('names a missing required variable (a deployment error)', () => {
    const { [LAMBDA_ENV.bucket]: _bucket, ...withoutBucket } = required;
    expect(() => readLambdaSettings(withoutBucket)).toThrow(
      `environment variable ${LAMBDA_ENV.bucket} is not set`,
    );
    expect(() => readLambdaSettings({ ...required, [LAMBDA_ENV.tableName]: '  ' })).toThrow(
      LAMBDA_ENV.tableName,
    );
  });

  it.each(['0', '-3', '2.5', 'many'])('refuses a lease of %p seconds', (value) => {
    expect(() => readLambdaSettings({ ...required, [LAMBDA_ENV.leaseSeconds]: value })).toThrow(
      `${LAMBDA_ENV.leaseSeconds} must be a positive integer`,
    );
  });
});
