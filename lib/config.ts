/**
 * Configuration read once at init. A Lambda with a missing TABLE_NAME fails at cold start,
 * not on the first request that happens to touch the table.
 */
function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`Missing required environment variable ${name}`);
  return value;
}

function optional(name: string): string | undefined {
  const value = process.env[name];
  return value ? value : undefined;
}

export const config = {
  get tableName(): string {
    return required('TABLE_NAME');
  },
  get imagesBucket(): string {
    return required('IMAGES_BUCKET');
  },
  /** Public base URL of the images (CloudFront on AWS, the S3 emulator locally). */
  get imagesBaseUrl(): string {
    return required('IMAGES_BASE_URL');
  },
  /** Point the SDK at DynamoDB Local or another endpoint; unset on AWS. */
  dynamodbEndpoint: optional('DYNAMODB_ENDPOINT'),
  s3Endpoint: optional('S3_ENDPOINT'),
  region: process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1',
  /** `ses` on AWS, `outbox` on the local stack (appends to OUTBOX_FILE). */
  get mailer(): 'ses' | 'outbox' {
    return process.env.MAILER === 'ses' ? 'ses' : 'outbox';
  },
  get mailFrom(): string {
    return process.env.MAIL_FROM ?? 'no-reply@store-api.local';
  },
  get outboxFile(): string {
    return process.env.OUTBOX_FILE ?? '.local/outbox.jsonl';
  },
  /** Session cookies get `Secure` unless the local stack serves plain http. */
  get insecureCookies(): boolean {
    return process.env.INSECURE_COOKIES === '1';
  },
  /** The local stack serves stores' domains over plain http, so `http://<store domain>[:port]` is their web origin there (CORS). */
  get plainHttpStoreOrigins(): boolean {
    return process.env.PLAIN_HTTP_STORE_ORIGINS === '1';
  },
};
