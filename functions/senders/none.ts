import { VerifyConfigError } from './common/errors';
import type { SenderScheme } from './types';

/** No verification at all, only when the integration opts in with `allowUnsigned: true`. */
export const none: SenderScheme<'none'> = {
  name: 'none',
  takesSecret: false,
  options: {
    allowUnsigned: {
      describe: 'confirms that accepting unsigned deliveries is intended',
      required: 'it accepts unsigned deliveries from anyone: set allowUnsigned: true to confirm',
      mustBe: true,
    },
  },
  secretHeaders: [],
  secretValuePrefixes: [],

  verify({ config }) {
    // A second line of defence: the config loader refuses this too, but a public URL must never be open by accident.
    if (config.allowUnsigned !== true) {
      throw new VerifyConfigError('verify scheme none needs allowUnsigned: true');
    }
    return { scheme: 'none' };
  },

  sign() {
    return {};
  },
};
