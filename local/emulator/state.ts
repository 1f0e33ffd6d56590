/**
 * What one emulator holds between requests: its fixed setup (key, workspace, templates, limits) and its
 * changing state (faults, readings, the outage switch, the AutomaticNumber counter, links, statistics). The
 * routes read and change it; nothing else does.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Workspace } from '../../functions/docgen/types';
import type { DownloadLinks } from './download-links';
import { EmulatorHttpError } from './errors';
import { type FaultDice, type FaultSettings, mergeFaultSettings } from './faults';
import { mergeReadings, type ServiceReadings } from './readings';
import type { StatsRecorder } from './stats';
import type { TemplateStore } from './template-store';

/** The fixed part of an emulator, decided at start. */
export interface EmulatorSetup {
  readonly apiKey: string;
  readonly workspace: Workspace;
  readonly store: TemplateStore;
  readonly pageSize: number;
  readonly bodyLimitBytes: number;
  readonly enforceRequired: boolean;
  readonly seed: number;
  readonly clock: () => number;
  readonly dice: FaultDice;
  readonly stats: StatsRecorder;
  readonly links: DownloadLinks;
}

/** An emulator's state: its setup, plus the settings and counters that change while it runs. */
export class EmulatorState {
  /** Base URL written in next-page and download links (known once the server listens). */
  baseUrl = '';
  /** While true, every request but the admin routes answers 503. */
  paused = false;
  private faultSettings: FaultSettings;
  private readingSettings: ServiceReadings;
  private automaticNumber = 0;
  private readonly keyDigest: Buffer;
  /** Aborted when the emulator stops: injected delays end at once. */
  readonly stopping = new AbortController();

  constructor(
    readonly setup: EmulatorSetup,
    faults: FaultSettings,
    readings: ServiceReadings,
  ) {
    this.faultSettings = faults;
    this.readingSettings = readings;
    this.keyDigest = digest(setup.apiKey);
  }

  /** The current faults (a copy). */
  get faults(): FaultSettings {
    const current = this.faultSettings;
    return { ...current, ...(current.failNext === undefined ? {} : { failNext: { ...current.failNext } }) };
  }

  /** Merges a fault patch; throws on an invalid one and changes nothing. */
  setFaults(patch: unknown): void {
    this.faultSettings = mergeFaultSettings(this.faultSettings, patch);
  }

  /** The current readings (a copy). */
  get readings(): ServiceReadings {
    return { ...this.readingSettings };
  }

  /** Merges a readings patch; throws on an invalid one and changes nothing. */
  setReadings(patch: unknown): void {
    this.readingSettings = mergeReadings(this.readingSettings, patch);
  }

  /** Uses up one of a countdown fault (`failNext`, `failAfterCreateNext`); true when one was pending. */
  takeCountdown(fault: 'failNext' | 'failAfterCreateNext'): boolean {
    const current = this.faultSettings;
    if (fault === 'failNext') {
      if (current.failNext === undefined || current.failNext.count <= 0) return false;
      this.faultSettings = mergeFaultSettings(current, {
        failNext: { ...current.failNext, count: current.failNext.count - 1 },
      });
      return true;
    }
    if ((current.failAfterCreateNext ?? 0) <= 0) return false;
    this.faultSettings = mergeFaultSettings(current, {
      failAfterCreateNext: (current.failAfterCreateNext ?? 0) - 1,
    });
    return true;
  }

  /** The next AutomaticNumber. */
  nextNumber(): number {
    this.automaticNumber += 1;
    return this.automaticNumber;
  }

  /** Refuses a request without the workspace's key (constant-time comparison of digests). */
  requireKey(req: IncomingMessage): void {
    const key = req.headers['x-api-key'];
    if (typeof key === 'string' && digest(key).equals(this.keyDigest)) return;
    throw new EmulatorHttpError(
      401,
      'Unauthorized',
      key === undefined ? 'Missing x-api-key header' : 'Invalid API key',
    );
  }

  /** Waits `ms` (an injected latency), ended early when the emulator stops. */
  async delay(ms: number): Promise<void> {
    if (ms > 0) await sleep(ms, undefined, { signal: this.stopping.signal });
  }
}

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();
