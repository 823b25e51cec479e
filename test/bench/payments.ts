import { resolve } from 'node:path';
import { startBenchStack } from './stack.ts';

/**
 * `npm run bench` (third part), or `npx tsx test/bench/payments.ts`: the time from a provider's
 * notification to the approval it causes. For RUNS orders (BENCH_PAYMENT_RUNS), a PIX payment is
 * made at a fake Mercado Pago (test/support/fake-mercadopago.ts, the stack's MERCADOPAGO_API_URL),
 * marked approved there, and its signed notification POSTed to the store's notify URL on the
 * local stack; the time is from sending the notification to its 200, when the approval's
 * transaction has committed (the order is then read to check it is APPROVED). Printed: median and
 * worst, the DynamoDB calls of the request (x-local-dynamodb-calls) and the provider calls
 * (one fetch). A second notification of the same payment (nothing to do) is timed the same way.
 * The local stack runs in this process (warm handlers, DynamoDB Local): a cold Lambda adds its
 * start (test/bench/functions.ts measures those).
 */
const RUNS = Number(process.env.BENCH_PAYMENT_RUNS ?? 15);

const stack = await startBenchStack(resolve('.local/bench-payments'));
// Imported once the stack has set the environment (the table client is made at import); the adapter reads the URL per call.
const { FakeMercadoPago } = await import('../support/fake-mercadopago.ts');
const fake = await new FakeMercadoPago().start();
process.env.MERCADOPAGO_API_URL = fake.url;

try {
  const { createStore } = await import('#lib/db/store.ts');
  const { createApiToken } = await import('#lib/db/credential.ts');
  const { getOrderItem } = await import('#lib/db/order.ts');
  const { createPayment, newPaymentId } = await import('#lib/db/payment.ts');
  const { newPayment } = await import('#lib/domain/payment.ts');
  const { mercadoPagoAdapter } = await import('#lib/payments/mercadopago.ts');

  const store = await createStore({ name: 'Bench payments', domain: `bench-payments-${process.pid}.test.localhost` });
  const { api_token: token } = await createApiToken(store.id);
  const request = async (method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown) => {
    const response = await fetch(`${stack.apiUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer = (await response.json()) as Record<string, unknown>;
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(answer)}`);
    return answer;
  };

  const accessToken = `APP_USR-bench-${process.pid}`;
  const webhookSecret = `whsec-bench-${process.pid}-secret`;
  fake.addAccount(accessToken, 424242);
  const account = await request('PUT', '/v1/app/payment/provider/mercadopago', { access_token: accessToken, webhook_secret: webhookSecret, gateways: ['PIX'] });
  const notifyUrl = account.notification_url as string;
  const pkg = await request('POST', '/v1/app/package', { name: 'Bench VIP', price: 4.99, commands: [{ command: 'give {client_identifier} vip' }] });
  const credentials = { secrets: { access_token: accessToken, webhook_secret: webhookSecret }, accountId: '424242' };

  const approvals: number[] = [];
  const repeats: number[] = [];
  const calls = new Set<string>();
  for (let run = 0; run < RUNS; run++) {
    const order = await request('POST', '/v1/app/order', {
      client_identifier: `player${run}`,
      client_email: `p${run}@example.com`,
      client_name: `Player ${run}`,
      packages: [{ package_id: pkg.id, quantity: 1 }],
    });
    const { payment } = newPayment(
      { id: newPaymentId(), store_id: store.id, order_id: order.id as number, gateway: 'PIX', amount: order.total as number, currency: 'BRL', expires_at: null },
      Date.now(),
    );
    const charge = await mercadoPagoAdapter().createCharge(credentials, {
      payment: { id: payment.id, gateway: 'PIX', amount: payment.amount, currency: 'BRL', expires_at: null },
      order: { id: order.id as number, internal_id: order.internal_id as string, description: 'Bench', payer: { email: 'p@example.com', name: 'Player' } },
      notificationUrl: notifyUrl,
      returnUrl: null,
    });
    await createPayment({ ...payment, status: 'PENDING', provider_ref: charge.provider_ref, pix_code: charge.pix_code, qr_code: charge.qr_code, revision: 1 });
    fake.setStatus(Number(charge.provider_ref), 'approved');
    const fetchesBefore = fake.requests.length;
    let started = performance.now();
    const approving = await fake.notify(Number(charge.provider_ref), { secret: webhookSecret });
    const approvalMs = performance.now() - started;
    if (approving.status !== 200) throw new Error(`notification answered ${approving.status} ${approving.body}`);
    const approved = await getOrderItem(store.id, order.id as number);
    if (approved.status !== 'APPROVED' || approved.payment_id !== payment.id) throw new Error(`order ${approved.id} is ${approved.status}`);
    started = performance.now();
    const repeat = await fake.notify(Number(charge.provider_ref), { secret: webhookSecret });
    const repeatMs = performance.now() - started;
    approvals.push(approvalMs);
    repeats.push(repeatMs);
    calls.add(
      `approval: ${approving.headers.get('x-local-dynamodb-calls')} DynamoDB calls; repeat: ${repeat.headers.get('x-local-dynamodb-calls')}; provider calls for both: ${fake.requests.length - fetchesBefore}`,
    );
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const row = (label: string, values: number[]) =>
    `${label.padEnd(34)} median ${median(values).toFixed(1).padStart(6)} ms   worst ${Math.max(...values)
      .toFixed(1)
      .padStart(6)} ms`;
  console.log(`\nNotification -> approval, ${RUNS} orders (Mercado Pago PIX, fake provider, local stack in process)`);
  console.log(row('notification that approves', approvals));
  console.log(row('same notification again (no-op)', repeats));
  for (const line of calls) console.log(line);
} finally {
  await stack.stop();
  await fake.stop();
}
