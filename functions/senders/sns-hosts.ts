/** The hosts SNS certificates and subscription URLs may come from; the one predicate every SNS check uses. */

/** `sns.<region>.amazonaws.com`, or `.amazonaws.com.cn` for the China regions. */
const SNS_HOST = /^sns\.[a-z]{2}(?:-[a-z]+)+-\d\.amazonaws\.com(?:\.cn)?$/;

/** True for an https URL on an SNS host, without port or credentials: the only place SNS sends us to. */
export function isSnsUrl(text: unknown): text is string {
  if (typeof text !== 'string') return false;
  try {
    const url = new URL(text);
    return url.protocol === 'https:' && url.port === '' && url.username === '' && SNS_HOST.test(url.hostname);
  } catch {
    return false;
  }
}
