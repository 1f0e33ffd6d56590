import { resolve } from 'node:path';
import { ConfigError, ConfigFileError } from '../../../functions/config/errors';
import { loadConfigFile, loadConfigFileSync, parseConfig } from '../../../functions/config/load';

const shipped = resolve(__dirname, '../../../config/docrelay.yaml');

const base = `
service:
  baseUrl: https://docs.example.com
integrations:
  - id: shop
    verify: { scheme: github, secret: docrelay/github-webhook }
    documents:
      - name: invoice
        template: { id: "9001" }
        data:
          Customer Name: "customer.name"
`;

/** Parses text expected to fail and returns its problems. */
function problemsOf(text: string): ConfigError['problems'] {
  try {
    parseConfig(text);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

/** The one problem of a config that replaces `from` in the base config with `to`. */
function onlyProblem(from: string, to: string) {
  if (!base.includes(from)) throw new Error(`base config has no ${from}`);
  const problems = problemsOf(base.replace(from, to));
  expect(problems).toHaveLength(1);
  return problems[0]!;
}

describe('parseConfig on valid configurations', () => {
  it('loads the shipped example config with every integration and rule', async () => {
    const loaded = await loadConfigFile(shipped);
    expect([...loaded.integrations.keys()]).toEqual([
      'github-releases',
      'stripe-invoices',
      'shopify-orders',
      'internal-notes',
      'order-events',
    ]);
    expect(loaded.integrations.get('github-releases')?.rules.map((r) => r.name)).toEqual([
      'release-notes',
      'changelog',
    ]);
    expect(loadConfigFileSync(shipped).config).toEqual(loaded.config);
  });

  it('fills the documented defaults', () => {
    const { config } = parseConfig(base);
    expect(config.service).toEqual({
      baseUrl: 'https://docs.example.com',
      apiKeySecret: 'docrelay/service-api-key',
      downloadOrigins: [],
      maxConcurrency: 4,
      timeoutSeconds: 30,
    });
    expect(config.storage.keyPattern).toBe('{integration}/{yyyy}/{MM}/{dd}/{jobId}/{filename}');
    expect(config.ingest.maxBodyBytes).toBe(1_048_576);
  });

  it('fills scheme defaults and lower-cases header names', () => {
    const verify = (text: string) =>
      parseConfig(base.replace('{ scheme: github, secret: docrelay/github-webhook }', text)).config
        .integrations[0]?.verify;
    expect(verify('{ scheme: token, secret: t }')).toEqual({
      scheme: 'token',
      secret: 't',
      header: 'authorization',
    });
    expect(verify('{ scheme: hmac-sha256, secret: [a, b], header: X-Signature }')).toEqual({
      scheme: 'hmac-sha256',
      secret: ['a', 'b'],
      header: 'x-signature',
      encoding: 'hex',
    });
    expect(verify('{ scheme: stripe, secret: s }')?.toleranceSeconds).toBe(300);
    expect(verify('{ scheme: none, allowUnsigned: true }')).toEqual({ scheme: 'none', allowUnsigned: true });
  });

  it('accepts http base URLs on loopback hosts only', () => {
    expect(
      parseConfig(base.replace('https://docs.example.com', 'http://127.0.0.1:4010')).config.service.baseUrl,
    ).toBe('http://127.0.0.1:4010');
    expect(
      parseConfig(base.replace('https://docs.example.com', 'http://localhost:4010')).config.service.baseUrl,
    ).toBe('http://localhost:4010');
  });

  it('takes an integration’s own API throttle (AWS), and refuses one out of bounds', () => {
    const withThrottle = (throttle: string) =>
      base.replace('    documents:', `    throttle: ${throttle}\n    documents:`);
    expect(
      parseConfig(withThrottle('{ rateLimit: 2.5, burstLimit: 5 }')).config.integrations[0]?.throttle,
    ).toEqual({
      rateLimit: 2.5,
      burstLimit: 5,
    });
    expect(problemsOf(withThrottle('{ rateLimit: 5, burstLimit: 1.5 }')).map((p) => p.path)).toEqual([
      'integrations[0].throttle.burstLimit',
    ]);
    expect(problemsOf(withThrottle('{ rateLimit: -1, burstLimit: 5 }')).map((p) => p.path)).toEqual([
      'integrations[0].throttle.rateLimit',
    ]);
  });

  it('compiles every expression with its config path', () => {
    const loaded = parseConfig(base.replace('documents:', 'deliveryId: "$headers.`x-id`"\n    documents:'));
    const integration = loaded.integrations.get('shop')!;
    expect(integration.deliveryId?.path).toBe('integrations[0].deliveryId');
    expect(integration.rules[0]?.data[0]?.expression.path).toBe(
      'integrations[0].documents[0].data["Customer Name"]',
    );
  });
});

describe('parseConfig error messages (one per kind)', () => {
  it('reports a YAML syntax error with line and column', () => {
    const [problem] = problemsOf('service:\n  baseUrl: [https://x\nintegrations: []\n');
    expect(problem?.message).toMatch(/^YAML /);
    expect(problem?.line).toBe(3);
    expect(new ConfigError('c.yaml', [problem!]).message).toMatch(/\(c\.yaml:3:\d+\)/);
  });

  it('reports a key given twice', () => {
    const [problem] = problemsOf('service:\n  baseUrl: https://a.example\n  baseUrl: https://b.example\n');
    expect(problem?.message).toMatch(/unique/i);
    expect(problem?.line).toBe(3);
  });

  it('reports an empty file', () => {
    expect(problemsOf('# nothing\n')[0]?.message).toMatch(/empty/);
  });

  it('rejects an unknown key next to the missing one it was meant to be', () => {
    const problems = problemsOf(base.replace('    verify:', '    verfy:'));
    expect(problems.map((p) => [p.path, p.message])).toEqual([
      [
        'integrations[0].verify',
        'an integration takes webhooks (give verify) or EventBridge events (give eventBridge), or both',
      ],
      [
        'integrations[0].verfy',
        expect.stringMatching(/^unknown key \(did you mean "verify"\?\); expected one of: id, verify/),
      ],
    ]);
  });

  it('rejects a misspelt key with a suggestion and the list of keys', () => {
    const problems = problemsOf(base.replace('  baseUrl:', '  maxConcurency: 4\n  baseUrl:'));
    expect(problems).toEqual([
      {
        path: 'service.maxConcurency',
        message:
          'unknown key (did you mean "maxConcurrency"?); expected one of: baseUrl, apiKeySecret, downloadOrigins, maxConcurrency, timeoutSeconds, linkLifetimeSeconds',
        line: 3,
        column: 3,
      },
    ]);
  });

  it('reports a missing required key', () => {
    const problem = onlyProblem('  baseUrl: https://docs.example.com', '  apiKeySecret: x');
    expect(problem).toMatchObject({ path: 'service.baseUrl', message: 'is required' });
  });

  it('refuses a plain-http base URL that is not loopback', () => {
    const problem = onlyProblem('https://docs.example.com', 'http://docs.example.com');
    expect(problem.path).toBe('service.baseUrl');
    expect(problem.message).toMatch(/must use https/);
  });

  it('refuses a download origin with a path', () => {
    const problem = onlyProblem('  baseUrl:', '  downloadOrigins: [https://files.example.com/x]\n  baseUrl:');
    expect(problem.path).toBe('service.downloadOrigins[0]');
    expect(problem.message).toMatch(/scheme:\/\/host/);
  });

  it('refuses maxConcurrency outside 1..100', () => {
    expect(onlyProblem('  baseUrl:', '  maxConcurrency: 0\n  baseUrl:')).toMatchObject({
      path: 'service.maxConcurrency',
      message: 'must be at least 1',
    });
    expect(onlyProblem('  baseUrl:', '  maxConcurrency: 2.5\n  baseUrl:').message).toMatch(/whole number/);
  });

  it('refuses an unknown key pattern placeholder', () => {
    const problem = onlyProblem(
      'integrations:',
      'storage:\n  keyPattern: "{integration}/{jobid}/{jobId}/{filename}"\nintegrations:',
    );
    expect(problem.path).toBe('storage.keyPattern');
    expect(problem.message).toMatch(/unknown placeholder \{jobid\}/);
  });

  it('refuses a key pattern that does not make keys unique', () => {
    const problems = problemsOf(
      base.replace('integrations:', 'storage:\n  keyPattern: "{integration}/x"\nintegrations:'),
    );
    expect(problems.map((p) => p.message)).toEqual([
      expect.stringMatching(/\{jobId\}, \{documentId\} or \{fileId\}/),
      expect.stringMatching(/\{filename\} or \{fileId\}/),
    ]);
  });

  it('refuses maxBodyBytes above the Lambda limit', () => {
    const problem = onlyProblem('integrations:', 'ingest:\n  maxBodyBytes: 10000000\nintegrations:');
    expect(problem).toMatchObject({ path: 'ingest.maxBodyBytes' });
    expect(problem.message).toMatch(/at most 4500000/);
  });

  it('refuses an integration id that is not URL-safe', () => {
    const problem = onlyProblem('- id: shop', '- id: "my shop"');
    expect(problem.path).toBe('integrations[0].id');
    expect(problem.message).toMatch(/letters, digits/);
  });

  it('refuses duplicate integration ids, even with other problems present', () => {
    const second = base
      .slice(base.indexOf('  - id: shop'))
      .replace('id: shop', 'id: SHOP')
      .replace('"9001"', '9001');
    const problems = problemsOf(base + second);
    expect(problems.map((p) => p.path)).toEqual([
      'integrations[1].id',
      'integrations[1].documents[0].template.id',
    ]);
    expect(problems[0]?.message).toBe(
      'duplicate integration id "SHOP" (also integrations[0]; ids are case-insensitive)',
    );
  });

  it('refuses an unknown scheme', () => {
    const problem = onlyProblem('scheme: github', 'scheme: gitea');
    expect(problem.path).toBe('integrations[0].verify.scheme');
    expect(problem.message).toMatch(/one of github, stripe/);
  });

  it('requires a secret for signed schemes', () => {
    expect(onlyProblem(', secret: docrelay/github-webhook', '')).toMatchObject({
      path: 'integrations[0].verify.secret',
      message: 'scheme github requires secret (the name of the secret holding the signing key)',
    });
  });

  it('requires allowUnsigned: true for scheme none, and refuses a secret there', () => {
    const problems = problemsOf(base.replace('scheme: github', 'scheme: none'));
    expect(problems.map((p) => [p.path, p.message])).toEqual([
      ['integrations[0].verify.secret', 'scheme none takes no secret'],
      ['integrations[0].verify.allowUnsigned', expect.stringMatching(/set allowUnsigned: true/)],
    ]);
  });

  it('names the schemes that take an option given to another scheme', () => {
    expect(onlyProblem('secret: docrelay/github-webhook', 'secret: s, prefix: "sha256="')).toEqual(
      expect.objectContaining({
        path: 'integrations[0].verify.prefix',
        message: 'scheme github does not take prefix (only hmac, hmac-sha256 do)',
      }),
    );
    // Every timestamped preset takes it: the list grows with the registry, in registry order.
    expect(onlyProblem('secret: docrelay/github-webhook', 'secret: s, toleranceSeconds: 60').message).toMatch(
      /^scheme github does not take toleranceSeconds \(only stripe, slack, standard-webhooks, .* do\)$/,
    );
  });

  it('requires header for hmac-sha256', () => {
    expect(onlyProblem('scheme: github', 'scheme: hmac-sha256')).toMatchObject({
      path: 'integrations[0].verify.header',
      message: expect.stringMatching(/requires header/),
    });
  });

  it('spots a secret value pasted where its name belongs', () => {
    expect(onlyProblem('docrelay/github-webhook', 'whsec_abc123').message).toMatch(
      /looks like a secret value/,
    );
  });

  it('asks to quote a template id written as a YAML number', () => {
    expect(onlyProblem('id: "9001"', 'id: 9001')).toMatchObject({
      path: 'integrations[0].documents[0].template.id',
      message: 'template.id must be a string: quote it, e.g. "9001" (a YAML number loses leading zeros)',
    });
  });

  it('refuses a template id that is not numeric', () => {
    expect(onlyProblem('id: "9001"', 'id: "invoice"').message).toMatch(/numeric id/);
  });

  it('asks to quote a data value written as a YAML number', () => {
    expect(onlyProblem('Customer Name: "customer.name"', 'Amount: 42')).toMatchObject({
      path: 'integrations[0].documents[0].data.Amount',
      message: expect.stringMatching(/write "42" \(quoted\)/),
    });
  });

  it.each([
    [
      'a data value',
      'Customer Name: "customer.name"',
      'Plan: "customer.("',
      'integrations[0].documents[0].data.Plan',
    ],
    [
      'when',
      '        template:',
      '        when: "action = "\n        template:',
      'integrations[0].documents[0].when',
    ],
    [
      'deliveryId',
      '    documents:',
      '    deliveryId: "$headers.["\n    documents:',
      'integrations[0].deliveryId',
    ],
  ])('reports a JSONata syntax error in %s with its path and position', (_what, from, to, path) => {
    const problem = onlyProblem(from, to);
    expect(problem.path).toBe(path);
    expect(problem.message).toMatch(/^invalid JSONata at character \d+: .+ \(S0\d+\)$/);
    expect(problem.line).toBeGreaterThan(0);
  });

  it.each([
    [
      'a data expression',
      'Customer Name: "customer.name"',
      'Customer Name: "$eval(customer.name)"',
      'integrations[0].documents[0].data["Customer Name"]',
    ],
    [
      'a when, through a variable',
      '        template:',
      '        when: "($e := $eval; $e(action))"\n        template:',
      'integrations[0].documents[0].when',
    ],
    [
      'the deliveryId',
      '    documents:',
      '    deliveryId: "$eval($headers.x)"\n    documents:',
      'integrations[0].deliveryId',
    ],
  ])('refuses $eval in %s, naming the expression by its path', (_what, from, to, path) => {
    const problem = onlyProblem(from, to);
    expect(problem.path).toBe(path);
    expect(problem.message).toMatch(/^\$eval is not allowed at character \d+: it runs text/);
  });

  it('refuses duplicate rule names within an integration', () => {
    const rule = base.slice(base.indexOf('      - name: invoice'));
    const problems = problemsOf(base + rule);
    expect(problems).toEqual([
      expect.objectContaining({
        path: 'integrations[0].documents[1].name',
        message: 'duplicate rule name "invoice" (also documents[0])',
      }),
    ]);
  });

  it('requires at least one document rule', () => {
    const text = base.slice(0, base.indexOf('    documents:')) + '    documents: []\n';
    expect(problemsOf(text)).toEqual([
      expect.objectContaining({
        path: 'integrations[0].documents',
        message: 'an integration needs at least one document rule',
      }),
    ]);
  });

  it('refuses an empty or malformed event pattern', () => {
    expect(
      onlyProblem('    documents:', '    eventBridge: { eventPattern: {} }\n    documents:'),
    ).toMatchObject({
      path: 'integrations[0].eventBridge.eventPattern',
      message: 'an event pattern must not be empty',
    });
    expect(
      onlyProblem('    documents:', '    eventBridge: { eventPattern: { source: myapp } }\n    documents:'),
    ).toMatchObject({
      path: 'integrations[0].eventBridge.eventPattern.source',
      message: expect.stringMatching(/list of matches/),
    });
  });

  it('refuses reserved property names', () => {
    const problem = onlyProblem('Customer Name:', 'constructor:');
    expect(problem.path).toBe('integrations[0].documents[0].data.constructor');
    expect(problem.message).toMatch(/reserved/);
  });

  it('reports every problem at once, in file order, in the message too', () => {
    const text = base
      .replace('https://docs.example.com', 'ftp://x')
      .replace('scheme: github', 'scheme: stripe, prefix: x')
      .replace('"customer.name"', '"("');
    let error: unknown;
    try {
      parseConfig(text, 'cfg.yaml');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const configError = error as ConfigError;
    expect(configError.code).toBe('CONFIG_INVALID');
    expect(configError.problems.map((p) => p.path)).toEqual([
      'service.baseUrl',
      'integrations[0].verify.prefix',
      'integrations[0].documents[0].data["Customer Name"]',
    ]);
    expect(configError.message.split('\n')[0]).toBe('cfg.yaml: 3 problems');
    expect(configError.message).toContain(
      '  - integrations[0].verify.prefix: scheme stripe does not take prefix',
    );
  });

  it('says when the file is missing', async () => {
    await expect(loadConfigFile('/nonexistent/docrelay.yaml')).rejects.toBeInstanceOf(ConfigFileError);
    expect(() => loadConfigFileSync('/nonexistent/docrelay.yaml')).toThrow(/no such file/);
  });
});
