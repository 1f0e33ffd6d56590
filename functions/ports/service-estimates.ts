/**
 * What the workers learned about the Document Generation Service and share between their invocations: for
 * now the ages at which its download links were refused or still served (its interface gives no lifetime).
 */

/** Ages in ms after the worker got a create answer: the youngest link refused, the oldest still served. */
export interface LinkAges {
  readonly refusedAtMs?: number;
  readonly servedAtMs?: number;
}

/** Where the estimates are kept, one entry per service (the job table on AWS and locally, memory in tests). */
export interface ServiceEstimates {
  /** The ages recorded for a service, or undefined when none were. */
  linkAges(service: string): Promise<LinkAges | undefined>;
  /** Records an age: a refusal is kept when younger than the one kept, a served link when older. */
  recordLinkAge(service: string, kind: 'refused' | 'served', ageMs: number): Promise<void>;
}
