import type { App } from 'aws-cdk-lib';
import type { StoreApiProps } from '#infra/store-api.ts';

/**
 * Everything a stage takes from the CDK context (`-c name=value`, or cdk.json), with its default.
 * Context values given with -c are strings; numbers are parsed here, once, with a clear error.
 *
 * | key | default | what |
 * |---|---|---|
 * | `stage` | `dev` | stage name; `prod` retains data and needs `mailFrom` |
 * | `mailFrom` | none (refused on prod) | verified SES sender of the login codes |
 * | `metricsNamespace` | `StoreApi/<stage>` | CloudWatch namespace of the request metrics |
 * | `apiThrottleRate` / `apiThrottleBurst` | 100 / 200 | requests a second / burst, per route of the /v1 API |
 * | `storeThrottleRate` / `storeThrottleBurst` | 50 / 100 | the same on the stores' own domains (login, handoff) |
 * | `storeDomains` | none | comma-separated custom domains of the store API (`*.stores.example.com,shop.example.com`) |
 * | `storeDomainCertificateArn` | none | ACM certificate (same region) covering every name of `storeDomains` |
 */
export const THROTTLE_DEFAULTS = {
  api: { rateLimit: 100, burstLimit: 200 },
  store: { rateLimit: 50, burstLimit: 100 },
} as const;

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
  const throttle = (prefix: keyof typeof THROTTLE_DEFAULTS) => ({
    rateLimit: positive(`${prefix}ThrottleRate`, THROTTLE_DEFAULTS[prefix].rateLimit),
    burstLimit: Math.round(positive(`${prefix}ThrottleBurst`, THROTTLE_DEFAULTS[prefix].burstLimit)),
  });

  const storeDomains = String(context('storeDomains') ?? '').split(',').map((name) => name.trim()).filter(Boolean);
  const certificateArn = context('storeDomainCertificateArn') as string | undefined;
  if (storeDomains.length > 0 !== (certificateArn !== undefined)) {
    throw new Error('storeDomains and storeDomainCertificateArn go together: the certificate must cover every store domain (-c storeDomains=*.stores.example.com -c storeDomainCertificateArn=arn:aws:acm:...)');
  }

  return {
    stage,
    mailFrom,
    metricsNamespace: String(context('metricsNamespace') ?? `StoreApi/${stage}`),
    throttle: { api: throttle('api'), store: throttle('store') },
    ...(certificateArn && { storeDomain: { domainNames: storeDomains, certificateArn } }),
  };
}
