/** The service estimates in memory: for unit tests, and for a worker given no table. */
import type { LinkAges, ServiceEstimates } from '../../ports/service-estimates';

/** Link ages per service, kept in a map. */
export class InMemoryServiceEstimates implements ServiceEstimates {
  private readonly ages = new Map<string, LinkAges>();

  async linkAges(service: string): Promise<LinkAges | undefined> {
    const ages = this.ages.get(service);
    return ages === undefined ? undefined : { ...ages };
  }

  async recordLinkAge(service: string, kind: 'refused' | 'served', ageMs: number): Promise<void> {
    const ages = this.ages.get(service) ?? {};
    if (kind === 'refused' && (ages.refusedAtMs === undefined || ageMs < ages.refusedAtMs)) {
      this.ages.set(service, { ...ages, refusedAtMs: ageMs });
    }
    if (kind === 'served' && (ages.servedAtMs === undefined || ageMs > ages.servedAtMs)) {
      this.ages.set(service, { ...ages, servedAtMs: ageMs });
    }
  }
}
