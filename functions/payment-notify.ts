import { receiveNotification } from '#lib/flows/payment-notify.ts';
import { apiBaseOf } from '#lib/http/api-base.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { lowerCaseHeaders, rawBody } from '#lib/http/raw-body.ts';
import { paymentRoutes } from '#lib/routes/payment.ts';
import { NOTIFY_BODY_MAX_BYTES } from '#lib/schemas/payment.ts';

// No body schema on the route: no JSON parser runs, and the signature is checked on the body as sent.
export const handler = defineHandler(paymentRoutes['payment-notify'], async ({ params, query, event }) =>
  receiveNotification({
    provider: params.provider,
    notifyKey: params.notifyKey,
    rawBody: rawBody(event, NOTIFY_BODY_MAX_BYTES),
    headers: lowerCaseHeaders(event.headers),
    query,
    apiBase: apiBaseOf(event),
  }),
);
