import { VerifyConfigError } from './errors';
import type { SchemeVerifier } from './types';

/** No verification at all, only when the integration opts in with `allowUnsigned: true`. */
export const verifyNone: SchemeVerifier = ({ config }) => {
  // A second line of defence: the config loader refuses this too, but a public URL must never be open by accident.
  if (config.allowUnsigned !== true) {
    throw new VerifyConfigError('verify scheme none needs allowUnsigned: true');
  }
  return { scheme: 'none' };
};
