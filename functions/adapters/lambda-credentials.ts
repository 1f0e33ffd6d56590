/**
 * The SDK's default credential provider reduced to what answers in Lambda: the execution role's environment
 * variables. The construct's bundling aliases `@aws-sdk/credential-provider-node` to this module to drop the
 * providers Lambda never uses (lib/docrelay-function.ts; sizes in docs/decisions.md, "Bundles"). Nothing
 * imports it directly; the CLI and local stack keep the full chain.
 */
import { fromEnv } from '@aws-sdk/credential-provider-env';

/** What `@aws-sdk/credential-provider-node`'s `defaultProvider` is in a Lambda bundle: environment credentials. */
export const defaultProvider = (init?: Parameters<typeof fromEnv>[0]): ReturnType<typeof fromEnv> =>
  fromEnv(init);
