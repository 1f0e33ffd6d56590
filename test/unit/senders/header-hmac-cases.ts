/**
 * The checks every preset whose sender signs the raw body into one header shares: it accepts the sender's
 * signature (computed here as the sender's docs say), the second secret of a rotation, and its delivery id;
 * it refuses another secret, another body, a malformed value and a missing header.
 */
import type { VerifyConfig } from '../../../functions/senders';
import { verifyDelivery } from '../../../functions/senders';
import { BODY, expectRefused, input, RESERIALISED, randomSecret } from './fixtures';

export interface HeaderHmacCase {
  readonly config: VerifyConfig;
  /** The signature header, lower-case, and its documented spelling. */
  readonly header: string;
  readonly display: string;
  /** Signs as the sender's docs say. */
  readonly sign: (secret: string, body: Buffer) => string;
  /** The header carrying the sender's delivery id, if any. */
  readonly deliveryHeader?: string;
  /** Secrets in the form the sender issues them. @default randomSecret */
  readonly secret?: () => string;
  /** Headers every delivery carries besides the signature. */
  readonly extraHeaders?: Record<string, string>;
}

/** Registers the shared tests for one preset. */
export function describeHeaderHmac(c: HeaderHmacCase): void {
  const newSecret = c.secret ?? (() => randomSecret());
  const secret = newSecret();
  const other = newSecret();
  const delivery = (headers: Record<string, string>, fields: Parameters<typeof input>[1] = {}) =>
    input(c.config, { secrets: [secret], headers: { ...c.extraHeaders, ...headers }, ...fields });

  it(`accepts the sender's signature${c.deliveryHeader === undefined ? '' : ' and reads its delivery id'}`, () => {
    const headers = {
      [c.header]: c.sign(secret, BODY),
      ...(c.deliveryHeader ? { [c.deliveryHeader]: 'dlv-1' } : {}),
    };
    const result = verifyDelivery(delivery(headers));
    expect(result.scheme).toBe(c.config.scheme);
    if (c.deliveryHeader !== undefined) expect(result.deliveryId).toBe('dlv-1');
  });

  it('accepts the second secret during a rotation', () => {
    const headers = { [c.header]: c.sign(other, BODY) };
    expect(verifyDelivery(delivery(headers, { secrets: [secret, other] })).scheme).toBe(c.config.scheme);
  });

  it('refuses another secret, another body and a re-serialised body', () => {
    expectRefused(delivery({ [c.header]: c.sign(other, BODY) }), 'SIGNATURE_INVALID');
    expectRefused(
      delivery({ [c.header]: c.sign(secret, BODY) }, { rawBody: Buffer.from(`${BODY} `) }),
      'SIGNATURE_INVALID',
    );
    expectRefused(
      delivery({ [c.header]: c.sign(secret, BODY) }, { rawBody: RESERIALISED }),
      'SIGNATURE_INVALID',
      [c.sign(secret, RESERIALISED)],
    );
  });

  it('refuses a missing header and a malformed one', () => {
    expect(expectRefused(delivery({}), 'SIGNATURE_MISSING').detail).toContain(c.display);
    expectRefused(
      delivery({ [c.header]: '!!not a signature!!' }),
      c.config.scheme === 'docusign' ? 'SIGNATURE_INVALID' : 'SIGNATURE_MALFORMED',
    );
  });
}
