import { testGatewayAction, type TestAction, type TestCharge } from '#lib/payments/test-gateway.ts';
import { TEST_ACTIONS } from '#lib/schemas/payment.ts';

/**
 * The TEST gateway's page (section 13): what a buyer sent to its `checkout_url` sees, the charge
 * as the pretend provider holds it and one button per action the provider would allow now. Each
 * button is a plain form POST (no script), so the page works in any browser and under a strict
 * content security policy.
 */

const LABEL: Record<TestAction, string> = {
  pay: 'Pay',
  fail: 'Fail the payment',
  cancel: 'Cancel',
  refund: 'Refund',
  dispute: 'Open a dispute',
  win: 'Win the dispute',
  lose: 'Lose the dispute',
};

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The actions the provider allows on the charge as it stands. */
export const offeredActions = (charge: TestCharge, now: number) => TEST_ACTIONS.filter((action) => testGatewayAction(charge, action, now) !== null);

export interface TestPageView {
  charge: TestCharge;
  /** This page's own URL: the buttons post to `<pageUrl>/<action>`. */
  pageUrl: string;
  now: number;
  /** What the last button's notification got back from the store, when one was just sent. */
  notice: string | null;
}

export function testGatewayPage({ charge, pageUrl, now, notice }: TestPageView): string {
  const amount = new Intl.NumberFormat('en', { style: 'currency', currency: charge.currency }).format(charge.amount_cents / 100);
  const buttons = offeredActions(charge, now)
    .map((action) => `<form method="post" action="${escapeHtml(`${pageUrl}/${action}`)}"><button type="submit" name="action" value="${action}">${LABEL[action]}</button></form>`)
    .join('\n');
  const back = charge.return_url ? `<p><a href="${escapeHtml(charge.return_url)}">Back to the store</a></p>` : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>TEST payment ${escapeHtml(charge.ref)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem}form{display:inline-block;margin:.25rem}button{padding:.5rem 1rem}</style></head>
<body>
<h1>TEST payment</h1>
<p>No money moves: this is the store's test gateway.</p>
<dl><dt>Amount</dt><dd id="amount">${escapeHtml(amount)}</dd><dt>Status</dt><dd id="status">${charge.status}</dd><dt>Dispute</dt><dd id="dispute">${charge.dispute ?? 'none'}</dd><dt>Reference</dt><dd>${escapeHtml(charge.reference)}</dd></dl>
${notice ? `<p id="notice">${escapeHtml(notice)}</p>` : ''}
${buttons || '<p>Nothing left to do with this payment.</p>'}
${back}
</body></html>
`;
}
