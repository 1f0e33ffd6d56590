/**
 * SNS signing certificates fetched from the message's SigningCertURL, not pinned, so AWS's rotation does not
 * stop delivery: https on an SNS host only, the chain checked up to a trust anchor, missing intermediates
 * fetched from an Amazon Trust Services host. Verified certificates are cached per URL.
 */
import { X509Certificate } from 'node:crypto';
import { rootCertificates } from 'node:tls';
import { SignatureError } from './common/errors';
import { isSnsUrl } from './sns-hosts';

/** GETs a URL; the wiring's default is a bounded fetch, tests inject their own. */
export type CertificateFetch = (url: string) => Promise<{ readonly status: number; readonly body: Buffer }>;

/** Where verified signing certificates come from. */
export interface CertificateSource {
  /** The PEM of the certificate at a SigningCertURL, chain checked; throws SignatureError when it is not SNS's. */
  get(url: string): Promise<string>;
}

/** Options of the certificate source. */
export interface CertificateSourceOptions {
  readonly fetch: CertificateFetch;
  /** Trust anchors, PEM. @default the system's root certificates (node:tls rootCertificates) */
  readonly trust?: readonly string[];
  /** @default () => new Date() */
  readonly now?: () => Date;
  /** Certificates kept at most (SNS uses one or two per region at a time). @default 32 */
  readonly maxEntries?: number;
}

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+-----END CERTIFICATE-----/g;
/** Certificates read from one file, and issuers fetched, at most. */
const MAX_CHAIN = 4;
/** Amazon Trust Services serves its intermediates here (the leaf's CA Issuers URL). */
const ISSUER_HOST = /^[a-z0-9-]+(\.[a-z0-9-]+)*\.amazontrust\.com$/;

const refuse = (message: string): SignatureError => new SignatureError('SIGNATURE_INVALID', message);

/** The CA Issuers URL of a certificate, when on an Amazon Trust Services host. */
function issuerUrl(certificate: X509Certificate): string | undefined {
  const match = /CA Issuers - URI:(\S+)/.exec(certificate.infoAccess ?? '');
  if (match?.[1] === undefined) return undefined;
  try {
    return ISSUER_HOST.test(new URL(match[1]).hostname) ? match[1] : undefined;
  } catch {
    return undefined;
  }
}

const issues = (issuer: X509Certificate, subject: X509Certificate): boolean =>
  subject.checkIssued(issuer) && subject.verify(issuer.publicKey);

/** A certificate source over `fetch`: each URL fetched and checked once, failures not cached. */
export function snsCertificateSource(options: CertificateSourceOptions): CertificateSource {
  // Parsed on first use: parsing the system's roots slows a cold start, and most ingests never see SNS.
  let parsedAnchors: X509Certificate[] | undefined;
  const anchors = (): X509Certificate[] => {
    parsedAnchors ??= (options.trust ?? rootCertificates).map((pem) => new X509Certificate(pem));
    return parsedAnchors;
  };
  const now = options.now ?? (() => new Date());
  const maxEntries = options.maxEntries ?? 32;
  const cache = new Map<string, Promise<string>>();

  const fetchOk = async (url: string, what: string): Promise<Buffer> => {
    const answer = await options.fetch(url);
    // Not a refusal: SNS retries a 5xx, and the host may answer later.
    if (answer.status !== 200) throw new Error(`${what} answered ${answer.status}`);
    return answer.body;
  };

  const load = async (url: string): Promise<string> => {
    const text = (await fetchOk(url, 'SigningCertURL')).toString('utf8');
    const chain = (text.match(PEM_BLOCK) ?? []).slice(0, MAX_CHAIN).map((pem) => new X509Certificate(pem));
    const [leaf] = chain;
    if (leaf === undefined) throw refuse('SigningCertURL holds no PEM certificate');
    const at = now().getTime();
    if (at < Date.parse(leaf.validFrom) || at > Date.parse(leaf.validTo)) {
      throw refuse('the SNS signing certificate is not valid now');
    }
    const host = new URL(url).hostname;
    const amazon = host.endsWith('.cn') ? 'sns.amazonaws.com.cn' : 'sns.amazonaws.com';
    if (leaf.checkHost(host) === undefined && leaf.checkHost(amazon) === undefined) {
      throw refuse('the SNS signing certificate is not issued to SNS');
    }
    for (let i = 0; i + 1 < chain.length; i += 1) {
      if (!issues(chain[i + 1] as X509Certificate, chain[i] as X509Certificate)) {
        throw refuse('the SNS certificate chain is broken');
      }
    }
    // Up the chain until a trust anchor issued the last certificate, fetching missing intermediates.
    let last = chain[chain.length - 1] as X509Certificate;
    for (let hop = 0; hop <= MAX_CHAIN; hop += 1) {
      const top = last;
      if (anchors().some((anchor) => anchor.fingerprint256 === top.fingerprint256 || issues(anchor, top))) {
        return leaf.toString();
      }
      const next = issuerUrl(top);
      if (next === undefined || hop === MAX_CHAIN) break;
      const issuer = new X509Certificate(await fetchOk(next, 'the CA Issuers URL'));
      if (!issues(issuer, top)) throw refuse('the SNS certificate chain is broken');
      last = issuer;
    }
    throw refuse('the SNS signing certificate does not chain to a trusted root');
  };

  return {
    get(url) {
      if (!isSnsUrl(url)) {
        return Promise.reject(refuse('SigningCertURL is not an https sns.<region>.amazonaws.com(.cn) URL'));
      }
      let entry = cache.get(url);
      if (entry === undefined) {
        if (cache.size >= maxEntries) cache.delete(cache.keys().next().value as string);
        entry = load(url);
        cache.set(url, entry);
        entry.catch(() => cache.delete(url));
      }
      return entry;
    },
  };
}
