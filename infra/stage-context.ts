import { readFileSync } from 'node:fs';
import type { App } from 'aws-cdk-lib';
import type { StageThrottle, ThrottleSettings } from '#infra/stacks/api-stage-stack.ts';
import type { StoreApiProps } from '#infra/store-api.ts';

/*
 * Everything a stage takes from the CDK context (`-c name=value`, or cdk.json), with its default.
 * Context values given with -c are strings; numbers are parsed here, once, with a clear error.
 * The values, their defaults and what each does: docs/operations.md, "Context values".
 */
/**
 * The throttles are tuned in cdk.json's `context` (the CDK CLI reads it for every synth and deploy;
 * `-c` overrides a value): read here too, so that an app built without the CLI (the infra tests)
 * gets the very same values.
 */
const CDK_JSON_CONTEXT = (JSON.parse(readFileSync(new URL('../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, number> }).context;
const fromCdkJson = (name: keyof StageThrottle): ThrottleSettings => ({
  rateLimit: CDK_JSON_CONTEXT[`${name}ThrottleRate`]!,
  burstLimit: CDK_JSON_CONTEXT[`${name}ThrottleBurst`]!,
});
export const THROTTLE_DEFAULTS: StageThrottle = { api: fromCdkJson('api'), store: fromCdkJson('store'), storefrontPublic: fromCdkJson('storefrontPublic') };

export function stageFromContext(app: App): Omit<StoreApiProps, 'functionsDir' | 'docsDir'> {
  const context = (key: string) => app.node.tryGetContext(key) as string | number | undefined;
  const stage = String(context('stage') ?? 'dev');
  if (!/^[a-z][a-z0-9-]{0,30}$/.test(stage)) throw new Error(`stage must be lowercase letters, digits and dashes: ${stage}`);
  const mailFrom = context('mailFrom') as string | undefined;
  if (mailFrom !== undefined && !/^[^@\s]+@[^@\s]+$/.test(mailFrom)) throw new Error(`mailFrom must be an email address: ${mailFrom}`);

  const positive = (key: string, fallback: number) => {
    const value = Number(context(key) ?? fallback);
    if (!Number.isFinite(value) || value <= 0) throw new Error(`${key} must be a positive number: ${context(key)}`);
    return value;
  };
  const throttle = (name: keyof StageThrottle) => ({
    rateLimit: positive(`${name}ThrottleRate`, THROTTLE_DEFAULTS[name].rateLimit),
    burstLimit: Math.round(positive(`${name}ThrottleBurst`, THROTTLE_DEFAULTS[name].burstLimit)),
  });

  const storeDomains = String(context('storeDomains') ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const certificateArn = context('storeDomainCertificateArn') as string | undefined;
  if (storeDomains.length > 0 !== (certificateArn !== undefined)) {
    throw new Error(
      'storeDomains and storeDomainCertificateArn go together: the certificate must cover every store domain (-c storeDomains=*.stores.example.com -c storeDomainCertificateArn=arn:aws:acm:...)',
    );
  }

  return {
    stage,
    mailFrom,
    metricsNamespace: String(context('metricsNamespace') ?? `StoreApi/${stage}`),
    throttle: { api: throttle('api'), store: throttle('store'), storefrontPublic: throttle('storefrontPublic') },
    ...(certificateArn && { storeDomain: { domainNames: storeDomains, certificateArn } }),
  };
}
