import { currentTimeMs } from '#lib/clock.ts';
import { getOrderItem, linkPayment, type OrderItem, type OrderPaymentLink } from '#lib/db/order.ts';
import { readPayment, settledPaymentWrite } from '#lib/db/payment.ts';
import { readProviderAccount, type ProviderAccount } from '#lib/db/payment-provider.ts';
import { getStoreOrThrow } from '#lib/db/store.ts';
import { retrying, writeGuarded } from '#lib/db/transact.ts';
import { settle, shouldCapture, STATUS_RANK, type OrderEffect, type PaymentRecord, type PaymentReport } from '#lib/domain/payment.ts';
import { notFound } from '#lib/errors.ts';
import { finishReversal, reverseRound, type ReversalReserve } from '#lib/flows/order-reversal.ts';
import { approveRound, finishApproval, type CommandIdReserve } from '#lib/flows/order.ts';
import { providerAdapter, providerCredentials } from '#lib/flows/payment-adapters.ts';
import { ProviderError, type ProviderCredentials } from '#lib/payments/adapter.ts';
import type { PaymentSource, ProviderSnapshot } from '#lib/schemas/payment.ts';

/*
 * The one settling flow of a payment (extensions section 13), whatever the source: a notification,
 * the buyer's poll, the operator's sync, the reconciler, the checkout's create call, the
 * operator's refund. Read (payment, order, store, provider account) -> learn (ask the provider,
 * or take what the caller learned) -> `settle` (lib/domain/payment.ts, rules 1-7) -> write the
 * decision once, conditioned on the payment's revision as read:
 *
 * | decision          | write                                                                                  |
 * |-------------------|----------------------------------------------------------------------------------------|
 * | payment only      | Put payment if `revision` is the one read                                              |
 * | APPROVE           | the section 4 approval's TransactWrite (order, commands, chain, counts) + the payment; |
 * |                   | then the counts if owed and the commission (lib/flows/order.ts finishApproval)         |
 * | LINK              | TransactWrite: order gains payment_id, gateway, paid_at (APPROVED, none yet) + payment |
 * | REFUND/CHARGEBACK | section 10 step 1's TransactWrite + the payment; then steps 2 and 3 (finishReversal)   |
 * | APPROVE + REFUND  | the approval, then step 1 with the payment (a payment first seen refunded)             |
 *
 * Reads: payment (unless the caller just read it), order, store (GetItems at once), then the account (unless the caller has it); the provider is asked at most once
 * per call, and a PayPal order the buyer approved is captured at most once per call (`shouldCapture`). A lost race (the payment's revision or the order changed: StaleRead) reads again and
 * settles again with what was learned; `settle` gives the same answer for the same state, so
 * however many sources race, one of them crosses each line (one approval, one refund).
 */

/** What the caller learned, or where to learn it. */
export type Learning =
  /** Ask the provider now: fetch the payment's charge (or find a Checkout Pro preference's payments by our reference). */
  | { ask: 'provider' }
  /** A provider state already fetched (a notification fetched the object it named). */
  | { ask: 'snapshot'; snapshot: ProviderSnapshot }
  /** A report in hand: a recorded status (the operator's refund without the provider, a canceled order) or only the clock. */
  | { ask: 'report'; report: PaymentReport };

export interface SettleRequest {
  storeId: number;
  orderId: number;
  paymentId: string;
  source: PaymentSource;
  learn: Learning;
  /** `<API base>` of the request (the TEST gateway's page URLs). */
  apiBase: string;
  /** The account and its opened credentials when the caller has them already (the notify route). */
  provider?: { account: ProviderAccount; credentials: ProviderCredentials };
  /** The payment as the caller just read it (consistently): the first round reads only the order and the store. */
  read?: PaymentRecord;
}

export interface SettledPayment {
  payment: PaymentRecord;
  order: OrderItem;
  /** The order effects this call applied (none when another source had settled it already). */
  applied: OrderEffect[];
}

/**
 * Settles one payment: see the module header. Throws 404 (no such payment or order in the store),
 * ProviderError (the provider could not be asked: callers answer 502, or 503 to a notification).
 */
export async function settlePayment(request: SettleRequest): Promise<SettledPayment> {
  const { storeId, orderId, paymentId, source } = request;
  let report: PaymentReport | undefined = request.learn.ask === 'report' ? request.learn.report : undefined;
  if (request.learn.ask === 'snapshot') report = { kind: 'provider', snapshot: request.learn.snapshot };
  let provider = request.provider;
  const reserve: { approval: CommandIdReserve; reversal: ReversalReserve } = { approval: {}, reversal: { gone: new Set() } };
  let known = request.read;
  let captured = false;
  const outcome = await retrying(async () => {
    // A lost round reads the payment again: its revision moved.
    const paymentRead = known ? Promise.resolve(known) : readPayment(storeId, orderId, paymentId);
    known = undefined;
    const [payment, order, store] = await Promise.all([paymentRead, getOrderItem(storeId, orderId), getStoreOrThrow(storeId)]);
    if (!payment) throw notFound('Payment');
    // The account rule 2 binds to (and whose credentials ask the provider), unless the caller read it already.
    const account = provider?.account ?? (await readProviderAccount(storeId, payment.provider));
    if (!report) {
      // Asked once per call: a lost race settles the newer state with what the provider said.
      if (!account) throw new ProviderError(payment.provider, 'unavailable', 'the store has no account at this provider');
      provider ??= { account, credentials: await providerCredentials(account) };
      report = await askProvider(payment, provider.credentials, request.apiBase);
    }
    // A PayPal order the buyer approved: the service takes the money, once per call, whichever source saw it first.
    if (!captured && report.kind === 'provider' && account && shouldCapture(payment, report.snapshot, account.account_id, currentTimeMs())) {
      provider ??= { account, credentials: await providerCredentials(account) };
      report = await captureAtProvider(payment, provider.credentials, request.apiBase);
      captured = true;
    }
    const decision = settle({
      payment,
      order: { status: order.status, payment_id: order.payment_id },
      accountId: account?.account_id ?? null,
      chargebackOn: store.payments.chargeback_on,
      report,
      source,
      now: currentTimeMs(),
    });
    if (!decision.changed) return { payment, order, applied: [] as OrderEffect[], cancel: false };
    const stored = await storeDecision(order, decision.payment, payment.revision, decision.order, reserve);
    return { payment: decision.payment, order: stored, applied: decision.order, cancel: decision.cancelAtProvider };
  });
  // What the transactions left owed (counts of a large approval, the commission, a reversal's commands): each once.
  if (outcome.applied.some((effect) => effect.kind === 'APPROVE')) await finishApproval(storeId, outcome.order);
  const reversed = outcome.applied.find((effect) => effect.kind === 'REFUND' || effect.kind === 'CHARGEBACK');
  if (reversed) await finishReversal(outcome.order, reversed.kind === 'REFUND' ? 'REFUNDED' : 'CHARGEBACK');
  if (outcome.cancel) await cancelAtProvider(outcome.payment, provider, request.apiBase);
  return { payment: outcome.payment, order: outcome.order, applied: outcome.applied };
}

/**
 * The provider's word on a payment: its charge when one is known (a PIX payment, a TEST charge, the
 * Checkout Pro payment that paid), else the payments made under a preference, the furthest along
 * first. Nothing found at the provider yet: only the clock speaks (rule 7).
 */
async function askProvider(payment: PaymentRecord, credentials: ProviderCredentials, apiBase: string): Promise<PaymentReport> {
  const adapter = await providerAdapter(payment, apiBase);
  const ref = payment.charge_ref ?? (payment.gateway === 'MERCADOPAGO' ? null : payment.provider_ref);
  try {
    if (ref) return { kind: 'provider', snapshot: await adapter.fetch(credentials, ref) };
    const found = await adapter.findByReference(credentials, payment.id);
    const furthest = [...found].sort((a, b) => STATUS_RANK[b.status] - STATUS_RANK[a.status])[0];
    return furthest ? { kind: 'provider', snapshot: furthest } : { kind: 'clock' };
  } catch (error) {
    if (error instanceof ProviderError && error.failure === 'not_found') return { kind: 'clock' };
    throw error;
  }
}

/** The capture (`capture:<payment id>`: however many sources ask, PayPal takes the money once) and the payment as it then stands. */
async function captureAtProvider(payment: PaymentRecord, credentials: ProviderCredentials, apiBase: string): Promise<PaymentReport> {
  const adapter = await providerAdapter(payment, apiBase);
  if (!adapter.capture) throw new ProviderError(payment.provider, 'refused', 'this provider takes no capture');
  return { kind: 'provider', snapshot: await adapter.capture(credentials, payment) };
}

/** The decision written over the payment's `readRevision`, with its order effects in the same transaction. */
async function storeDecision(
  order: OrderItem,
  payment: PaymentRecord,
  readRevision: number,
  effects: readonly OrderEffect[],
  reserve: { approval: CommandIdReserve; reversal: ReversalReserve },
): Promise<OrderItem> {
  const paymentWrite = settledPaymentWrite(payment, readRevision);
  const paid = effects.find((effect) => effect.kind === 'APPROVE' || effect.kind === 'LINK');
  const reversal = effects.find((effect) => effect.kind === 'REFUND' || effect.kind === 'CHARGEBACK');
  let current = order;
  if (paid) {
    const link: OrderPaymentLink = { payment_id: paid.payment_id, gateway: paid.gateway, paid_at: paid.paid_at };
    // Approved and reversed at once (first seen refunded): the payment goes with the reversal, the
    // last write, so a crash in between leaves it unsettled and the next source finishes the reversal.
    const writes = reversal ? [] : [paymentWrite];
    current = paid.kind === 'APPROVE' ? await approveRound(order.store_id, order, reserve.approval, { link, writes }) : await linkPayment(order, link, writes);
  }
  if (reversal) current = await reverseRound(current, reversal.kind === 'REFUND' ? 'REFUNDED' : 'CHARGEBACK', reserve.reversal, [paymentWrite]);
  if (!paid && !reversal) await writeGuarded([paymentWrite]);
  return current;
}

/** Rule 7: an expired payment is cancelled at its provider, best effort (the provider refuses money past the expiry anyway). */
async function cancelAtProvider(payment: PaymentRecord, provider: SettleRequest['provider'], apiBase: string): Promise<void> {
  try {
    const account = provider?.account ?? (await readProviderAccount(payment.store_id, payment.provider));
    if (!account) return;
    const credentials = provider?.credentials ?? (await providerCredentials(account));
    await (await providerAdapter(payment, apiBase)).cancel(credentials, payment);
  } catch (error) {
    // The payment is EXPIRED here whatever the provider says; a failure is logged without the payment's secrets.
    console.warn(
      JSON.stringify({ level: 'warn', message: 'payment cancel at provider failed', payment_id: payment.id, error: error instanceof Error ? error.message : String(error) }),
    );
  }
}
