import { fromEnv, type FromEnvInit } from '@aws-sdk/credential-provider-env';

/**
 * Stands in for `@aws-sdk/credential-provider-node` in the Lambda bundles (an esbuild alias,
 * infra/build.ts), for every AWS client at once. Lambda hands a function its role's credentials in
 * the environment, the first link of the default chain; the other links (SSO, ini files, process,
 * web identity, container and instance metadata) are never reached there and cost bundle size and
 * cold start. The local stack, tests and the admin CLI run from source and keep the full chain.
 */
export const defaultProvider = (init?: FromEnvInit) => fromEnv(init);
