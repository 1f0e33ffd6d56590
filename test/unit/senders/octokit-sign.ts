import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';

// @octokit/webhooks-methods is ESM-only and the unit project's Jest transform leaves node_modules alone, so
// GitHub's own signer runs in a child Node process (no network), once per batch of payloads.
const SCRIPT = `
import { readFileSync } from 'node:fs';
import { sign, verify } from '@octokit/webhooks-methods';
const { op, secret, items } = JSON.parse(readFileSync(0, 'utf8'));
const out = await Promise.all(items.map((item) => op === 'sign' ? sign(secret, item.payload) : verify(secret, item.payload, item.signature)));
process.stdout.write(JSON.stringify(out));
`;

const run = <T>(request: unknown): T =>
  JSON.parse(
    execFileSync(process.execPath, ['--input-type=module', '-e', SCRIPT], {
      cwd: resolve(__dirname, '../../..'),
      input: JSON.stringify(request),
      encoding: 'utf8',
    }),
  ) as T;

/** `X-Hub-Signature-256` values computed by @octokit/webhooks-methods `sign`, one per payload. */
export const octokitSign = (secret: string, payloads: readonly string[]): string[] =>
  run<string[]>({ op: 'sign', secret, items: payloads.map((payload) => ({ payload })) });

/** @octokit/webhooks-methods `verify` verdicts, one per (payload, signature). */
export const octokitVerify = (
  secret: string,
  items: readonly { payload: string; signature: string }[],
): boolean[] => run<boolean[]>({ op: 'verify', secret, items });
