import { headerHmacScheme } from './common/header-hmac-scheme';

/**
 * GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>`; delivery id from X-GitHub-Delivery,
 * not signed (a replay may carry any id: the signed body dedupes too).
 */
export const github = headerHmacScheme({
  name: 'github',
  signature: { header: 'x-hub-signature-256', display: 'X-Hub-Signature-256' },
  format: { algorithm: 'sha256', encoding: 'hex', prefix: 'sha256=' },
  delivery: { header: 'x-github-delivery', display: 'X-GitHub-Delivery' },
  // The legacy SHA-1 signature GitHub still sends beside the SHA-256 one.
  otherSecretHeaders: ['x-hub-signature'],
  extraHeaders: (input) => ({ 'x-github-event': guessGithubEvent(input.rawBody) }),
});

/** GitHub names the event in X-GitHub-Event; guessed from the payload's shape (override with --header). */
function guessGithubEvent(rawBody: Buffer): string {
  let body: unknown;
  try {
    body = JSON.parse(rawBody.toString('utf8'));
  } catch {
    return 'ping';
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return 'ping';
  const has = (key: string): boolean => Object.hasOwn(body, key);
  if (has('zen') && has('hook_id')) return 'ping';
  if (has('commits') && has('ref')) return 'push';
  const byKey: ReadonlyArray<readonly [string, string]> = [
    ['release', 'release'],
    ['pull_request', 'pull_request'],
    ['issue', has('comment') ? 'issue_comment' : 'issues'],
    ['workflow_run', 'workflow_run'],
    ['workflow_job', 'workflow_job'],
    ['check_run', 'check_run'],
    ['check_suite', 'check_suite'],
    ['deployment_status', 'deployment_status'],
    ['deployment', 'deployment'],
    ['discussion', 'discussion'],
  ];
  return byKey.find(([key]) => has(key))?.[1] ?? 'ping';
}
