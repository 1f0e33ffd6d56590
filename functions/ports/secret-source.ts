/** The port for secret values (Secrets Manager on AWS, a JSON file locally), read by name and cached. */
import { DocrelayError } from '../commons/errors';

/** Reads secret values by name. */
export interface SecretSource {
  /** The current value of the named secret (cached). */
  get(name: string): Promise<string>;
  /** Forgets the cached value, so the next `get` reads it again (a rotated secret, without a deploy). */
  refresh(name: string): void;
  /**
   * Stores a new value under the name, where the source can be written (a sender's handshake hands one over:
   * Asana's X-Hook-Secret). Absent on read-only sources.
   */
  put?(name: string, value: string): Promise<void>;
}

/** A secret that is missing or cannot be read. Its message names the secret, never a value. */
export class SecretNotFoundError extends DocrelayError {
  override name = 'SecretNotFoundError';
  constructor(name: string, where: string, cause?: unknown) {
    super('SECRET_NOT_FOUND', `secret "${name}" is not set in ${where}`, { cause });
  }
}
