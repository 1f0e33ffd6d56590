/**
 * Signing webhooks as their senders do, for every e2e test. GitHub, Shopify, Slack and the generic HMAC are
 * plain HMACs; Standard Webhooks and Stripe use the senders' own libraries, so the tests do not share an
 * implementation with the verifier they exercise.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';

// Only the signing helper is used: the client never makes a request.
const stripe = new Stripe('sk_test_unused');

/** Headers of a signed webhook, content type included. */
export type SignedHeaders = Record<string, string>;

const nowSeconds = (at: Date): number => Math.floor(at.getTime() / 1000);

/** GitHub: `X-Hub-Signature-256: sha256=<hex HMAC>`, the delivery id in X-GitHub-Delivery. */
export function signGithub(
  body: Buffer,
  secret: string,
  deliveryId: string = randomUUID(),
  event = 'release',
): SignedHeaders {
  return {
    'content-type': 'application/json',
    'x-github-event': event,
    'x-github-delivery': deliveryId,
    'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
  };
}

/** Standard Webhooks (`whsec_` secret): webhook-id, webhook-timestamp and webhook-signature. */
export function signStandardWebhooks(
  body: Buffer,
  secret: string,
  id: string = `msg_${randomUUID()}`,
  at: Date = new Date(),
): SignedHeaders {
  const signature = new Webhook(secret).sign(id, at, body.toString('utf8'));
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(nowSeconds(at)),
    'webhook-signature': signature,
  };
}

/** Stripe: `Stripe-Signature: t=...,v1=...` through the Stripe library's own test helper, optionally at `at`. */
export function signStripe(body: Buffer, secret: string, at?: Date): SignedHeaders {
  const header = stripe.webhooks.generateTestHeaderString({
    payload: body.toString('utf8'),
    secret,
    ...(at === undefined ? {} : { timestamp: nowSeconds(at) }),
  });
  return { 'content-type': 'application/json', 'stripe-signature': header };
}

/** Shopify: `X-Shopify-Hmac-Sha256: <base64 HMAC>`, the delivery id in X-Shopify-Webhook-Id. */
export function signShopify(body: Buffer, secret: string, webhookId: string = randomUUID()): SignedHeaders {
  return {
    'content-type': 'application/json',
    'x-shopify-topic': 'orders/paid',
    'x-shopify-event-id': randomUUID(),
    'x-shopify-webhook-id': webhookId,
    'x-shopify-hmac-sha256': createHmac('sha256', secret).update(body).digest('base64'),
  };
}

/** Slack: `X-Slack-Signature: v0=<hex HMAC of v0:{ts}:{body}>` and `X-Slack-Request-Timestamp`. */
export function signSlack(body: Buffer, secret: string, at: Date = new Date()): SignedHeaders {
  const ts = String(nowSeconds(at));
  const mac = createHmac('sha256', secret).update(`v0:${ts}:`).update(body).digest('hex');
  return {
    'content-type': 'application/json',
    'x-slack-request-timestamp': ts,
    'x-slack-signature': `v0=${mac}`,
  };
}

/** The generic HMAC scheme: `X-Signature: sha256=<hex HMAC>`. */
export function signHmac(body: Buffer, secret: string): SignedHeaders {
  return {
    'content-type': 'application/json',
    'x-signature': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
  };
}

/** The token scheme: `Authorization: Bearer <token>` (the body is not signed). */
export function signToken(_body: Buffer, secret: string): SignedHeaders {
  return { 'content-type': 'application/json', authorization: `Bearer ${secret}` };
}
