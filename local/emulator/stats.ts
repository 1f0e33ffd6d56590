/**
 * What the emulator saw: API requests (never admin routes), documents created, downloads and the headers
 * each download request carried. Every list is bounded so a long benchmark does not grow memory.
 */

/** One API or download request as the emulator answered it. */
export interface RequestRecord {
  method: string;
  /** Path without the query string. */
  path: string;
  status: number;
  /** Whether the request carried an `x-api-key` header at all (right or wrong). */
  hadApiKey: boolean;
  /** Latency the emulator added (faults.latencyMs, plus generationLatencyMs on create document). */
  delayMs: number;
  /** When the answer was given (ms since the epoch, the emulator's clock). */
  at: number;
  /** The injected fault that decided the answer, when one did. */
  fault?:
    | 'paused'
    | 'failNext'
    | 'rate429'
    | 'rate5xx'
    | 'failAfterCreate'
    | 'downloadFail'
    | 'downloadTruncate';
}

/** A generated file as recorded: its id, and the sha256 (hex) and size in bytes of its full content. */
export interface CreatedFileRecord {
  fileId: string;
  sha256: string;
  size: number;
}

/** A document the emulator generated. */
export interface CreatedDocumentRecord {
  documentId: string;
  templateId: string;
  templateFileId: string;
  files: CreatedFileRecord[];
  /** When it was made and when its links expire (ms since the epoch, the emulator's clock). */
  createdAt: number;
  linksExpireAt: number;
  /** The `Title` value the client sent, when it sent a string: tells one client's documents apart. */
  title?: string;
}

/** A snapshot of what the emulator saw since it started or since the last reset. */
export interface EmulatorStats {
  /** The last 10 000 API and download requests, oldest first. */
  requests: RequestRecord[];
  documentsCreated: number;
  /** Download requests answered 200 (including those injected to be truncated). */
  downloads: number;
  /** Headers of the last 1 000 download requests; an `x-api-key` value is recorded as `<redacted>`. */
  downloadHeaders: Array<Record<string, string>>;
  /** The last 10 000 documents created. */
  createdDocuments: CreatedDocumentRecord[];
  /** Create-document requests past validation and not yet answered: generations in flight now. */
  generationsInFlight: number;
  /** The most generations in flight at once since the start or the last reset. */
  maxGenerationsInFlight: number;
}

/** Bounds of the recorded lists. */
export const statsLimits = { requests: 10_000, downloadHeaders: 1_000, createdDocuments: 10_000 } as const;

/** Collects stats with bounded lists; `snapshot()` returns copies the caller may keep. */
export class StatsRecorder {
  private requests: RequestRecord[] = [];
  private downloadHeaders: Array<Record<string, string>> = [];
  private createdDocuments: CreatedDocumentRecord[] = [];
  private documentsCreated = 0;
  private downloads = 0;
  private inFlight = 0;
  private maxInFlight = 0;

  /** Records one answered request. */
  request(record: RequestRecord): void {
    pushBounded(this.requests, record, statsLimits.requests);
  }

  /** A generation starts (a create-document request passed validation); call generationEnded after. */
  generationStarted(): void {
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
  }

  /** A generation ended, answered or not. */
  generationEnded(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
  }

  /** Records a generated document. */
  documentCreated(record: CreatedDocumentRecord): void {
    this.documentsCreated += 1;
    pushBounded(this.createdDocuments, record, statsLimits.createdDocuments);
  }

  /** Records the headers of a download request (redacting an API key sent by mistake). */
  downloadRequested(headers: Record<string, string | string[] | undefined>): void {
    const copy: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) {
      if (value === undefined) continue;
      copy[name] = name === 'x-api-key' ? '<redacted>' : Array.isArray(value) ? value.join(', ') : value;
    }
    pushBounded(this.downloadHeaders, copy, statsLimits.downloadHeaders);
  }

  /** Counts a download answered 200. */
  downloadServed(): void {
    this.downloads += 1;
  }

  /** A copy of everything recorded. */
  snapshot(): EmulatorStats {
    return {
      requests: this.requests.slice(-statsLimits.requests).map((r) => ({ ...r })),
      documentsCreated: this.documentsCreated,
      downloads: this.downloads,
      downloadHeaders: this.downloadHeaders.slice(-statsLimits.downloadHeaders).map((h) => ({ ...h })),
      createdDocuments: this.createdDocuments
        .slice(-statsLimits.createdDocuments)
        .map((d) => ({ ...d, files: d.files.map((f) => ({ ...f })) })),
      generationsInFlight: this.inFlight,
      maxGenerationsInFlight: this.maxInFlight,
    };
  }

  /** Forgets everything recorded. */
  reset(): void {
    this.requests = [];
    this.downloadHeaders = [];
    this.createdDocuments = [];
    this.documentsCreated = 0;
    this.downloads = 0;
    this.maxInFlight = this.inFlight;
  }
}

// Drops the oldest entries in batches, so a full list costs an occasional splice rather than one per push.
function pushBounded<T>(list: T[], item: T, limit: number): void {
  list.push(item);
  if (list.length > limit + Math.ceil(limit / 10)) list.splice(0, list.length - limit);
}
