import { createHmac, randomBytes } from 'node:crypto';
import { verifyDelivery } from '../../../functions/senders';
import { BODY, expectRefused, input } from './fixtures';
import { describeHeaderHmac } from './header-hmac-cases';

// DocuSign Connect's docs: base64 HMAC-SHA256 of the raw body with a Connect key, one header per key.
const sign = (secret: string, body: Buffer) => createHmac('sha256', secret).update(body).digest('base64');
const newKey = () => randomBytes(32).toString('base64');

describe('docusign scheme', () => {
  describeHeaderHmac({
    config: { scheme: 'docusign', secret: 'docrelay/docusign' },
    header: 'x-docusign-signature-1',
    display: 'X-DocuSign-Signature-1',
    sign,
    secret: newKey,
  });

  it('accepts any X-DocuSign-Signature-<n> matching any configured key (several active keys)', () => {
    const [a, b, c] = [newKey(), newKey(), newKey()];
    const delivery = input(
      { scheme: 'docusign', secret: 'docrelay/docusign' },
      {
        secrets: [c],
        headers: { 'x-docusign-signature-1': sign(a, BODY), 'x-docusign-signature-2': sign(c, BODY) },
      },
    );
    expect(verifyDelivery(delivery).scheme).toBe('docusign');
    expectRefused({ ...delivery, secrets: [b] }, 'SIGNATURE_INVALID');
  });

  it('verifies an XML body over its bytes as well', () => {
    const key = newKey();
    const xml = Buffer.from(
      '<?xml version="1.0"?><DocuSignEnvelopeInformation><EnvelopeStatus/></DocuSignEnvelopeInformation>',
    );
    const delivery = input(
      { scheme: 'docusign', secret: 'd' },
      { secrets: [key], rawBody: xml, headers: { 'x-docusign-signature-1': sign(key, xml) } },
    );
    expect(verifyDelivery(delivery).scheme).toBe('docusign');
  });
});
