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
  /** CloudWatch namespace of the request metrics (lib/http/request-log.ts); set by the stack, unset on the local stack. */
  metricsNamespace: optional('METRICS_NAMESPACE'),
  /** The function's group in the metrics and alarms: its area of the route table. */
  get functionGroup(): string {
    return process.env.FUNCTION_GROUP ?? 'ungrouped';
  },
  /** The server secret (keyed hashes, lib/server-secret.ts): its Secrets Manager ARN on AWS, set only on the functions that use it. */
  get serverSecretArn(): string | undefined {
    return optional('SERVER_SECRET_ARN');
  },
  /** The server secret's file on the local stack (`<LOCAL_DIR>/server-secret.json`, mode 0600). */
  get serverSecretFile(): string | undefined {
    return optional('SERVER_SECRET_FILE');
  },
  /** The stage's KMS key of the payment provider secrets (lib/payments/secrets.ts), set only on the functions granted it. */
  get paymentSecretsKeyId(): string | undefined {
    return optional('PAYMENT_SECRETS_KEY_ID');
  },
  /** The local stack's AES-256-GCM key of the provider secrets (`<LOCAL_DIR>/payment-secrets.key`, mode 0600). */
  get paymentSecretsKeyFile(): string | undefined {
    return optional('PAYMENT_SECRETS_KEY_FILE');
  },
  /** A fake Mercado Pago on the local stack and in tests; never set on a deployed function, which calls api.mercadopago.com. */
  get mercadopagoApiUrl(): string | undefined {
    return optional('MERCADOPAGO_API_URL');
  },
  /** A fake Stripe on the local stack and in tests; never set on a deployed function, which calls api.stripe.com. */
  get stripeApiUrl(): string | undefined {
    return optional('STRIPE_API_URL');
  },
  /** A fake PayPal on the local stack and in tests (its API and its certificate URLs); never set on a deployed function. */
  get paypalApiUrl(): string | undefined {
    return optional('PAYPAL_API_URL');
  },
  /**
   * A PEM file of the roots PayPal's webhook certificate must chain to, replacing the runtime's
   * Mozilla roots: the tests' own root CA on the local stack only, never on a deployed function.
   */
  get paypalTrustedRootsFile(): string | undefined {
    return optional('PAYPAL_TRUSTED_ROOTS_FILE');
  },
  /** The TEST payment gateway is offered (section 13): on the local stack, and on a stage deployed with `testGateway=true`. */
  get testGatewayAllowed(): boolean {
    return process.env.TEST_GATEWAY === '1';
  },
  /**
   * The API's public base URL (no `/v1`), for the `notification_url` providers call. Set by the local
   * stack; on AWS unset, and the request's own host (API Gateway's domain name) is used.
   */
  get apiBaseUrl(): string | undefined {
    return optional('API_BASE_URL');
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
  /** The webhook delivery queue (SQS) on AWS; unset on the local stack, which queues in process. */
  webhookQueueUrl: optional('WEBHOOK_QUEUE_URL'),
  /**
   * The local stack delivers webhooks to http://localhost and 127.0.0.1, and calls any address;
   * deployed, only https to public addresses (lib/domain/webhook.ts).
   */
  get webhookLocalTargets(): boolean {
    return process.env.WEBHOOK_LOCAL_TARGETS === '1';
  },
  /** Shrinks the retry schedule (tests: a day of retries in a second); 1 unless set. */
  get webhookRetryScale(): number {
    const scale = Number(process.env.WEBHOOK_RETRY_SCALE ?? 1);
    return Number.isFinite(scale) && scale > 0 ? scale : 1;
  },
  /** How long a receiver may take; 10 s unless set (tests shorten it). */
  get webhookTimeoutMs(): number {
    const ms = Number(process.env.WEBHOOK_TIMEOUT_MS ?? 10_000);
    return Number.isFinite(ms) && ms > 0 ? ms : 10_000;
  },
  /**
   * How long one DynamoDB attempt may wait for its answer (lib/db/client.ts). 1.5 s on AWS, where
   * an answer takes milliseconds and a stuck one is a fault to retry within the function's 10 s;
   * 10 s against another endpoint (DynamoDB Local on a loaded machine can take seconds for a large
   * transaction, and a timeout there would be a fault that never happened). DYNAMODB_REQUEST_TIMEOUT_MS overrides.
   */
  get dynamodbRequestTimeoutMs(): number {
    const ms = Number(process.env.DYNAMODB_REQUEST_TIMEOUT_MS ?? (this.dynamodbEndpoint ? 10_000 : 1_500));
    return Number.isFinite(ms) && ms > 0 ? ms : 1_500;
  },
  /** The local stack serves stores' domains over plain http, so `http://<store domain>[:port]` is their web origin there (CORS). */
  get plainHttpStoreOrigins(): boolean {
    return process.env.PLAIN_HTTP_STORE_ORIGINS === '1';
  },
};
