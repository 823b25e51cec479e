import { join } from 'node:path';
import { inject } from 'vitest';

/**
 * Test files talk to the API over HTTP, and create their stores and credentials through the
 * same lib/ functions the admin command line uses, against the same DynamoDB Local.
 */
Object.assign(process.env, {
  TABLE_NAME: inject('tableName'),
  DYNAMODB_ENDPOINT: inject('dynamodbEndpoint'),
  S3_ENDPOINT: inject('s3Endpoint'),
  IMAGES_BUCKET: inject('bucket'),
  IMAGES_BASE_URL: `${inject('s3Endpoint')}/${inject('bucket')}`,
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'local',
  AWS_SECRET_ACCESS_KEY: 'local',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  // The run's own server secret, made by its stack in its LOCAL_DIR: codes and cursors made here are the stack's.
  SERVER_SECRET_FILE: join(inject('localDir'), 'server-secret.json'),
  PAYMENT_SECRETS_KEY_FILE: join(inject('localDir'), 'payment-secrets.key'),
  // Handlers run in this process (events.test.ts) judge webhook URLs by the local stack's rules, as the stack does.
  WEBHOOK_LOCAL_TARGETS: '1',
  // As the stack runs them: the TEST gateway offered, Mercado Pago at the port the fake takes when a test starts it.
  TEST_GATEWAY: '1',
  API_BASE_URL: inject('apiUrl'),
  MERCADOPAGO_API_URL: `http://127.0.0.1:${inject('mercadopagoPort')}`,
  STRIPE_API_URL: `http://127.0.0.1:${inject('stripePort')}`,
  PAYPAL_API_URL: `http://127.0.0.1:${inject('paypalPort')}`,
});
