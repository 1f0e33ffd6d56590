/**
 * The AWS SDK's default credential provider as a Lambda function needs it: the environment variables the
 * Lambda runtime sets for the execution role (the first link of the SDK's default chain, and the only one
 * that answers in Lambda). The construct's bundling aliases `@aws-sdk/credential-provider-node` to this
 * module (lib/docrelay-function.ts): every client's runtime config imports that package's `defaultProvider`
 * even when given credentials, and with it the SSO, STS, login and IMDS providers and
 * `@aws-sdk/nested-clients`, ~95 KB of each bundle that Lambda never uses. Nothing imports this module
 * directly; the CLI and the local stack, which esbuild does not bundle this way, keep the full chain
 * (profiles, SSO) or pass static credentials.
 */
import { fromEnv } from '@aws-sdk/credential-provider-env';

/** What `@aws-sdk/credential-provider-node`'s `defaultProvider` is in a Lambda bundle: environment credentials. */
export const defaultProvider = (init?: Parameters<typeof fromEnv>[0]): ReturnType<typeof fromEnv> =>
  fromEnv(init);
