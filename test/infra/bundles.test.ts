import { resolve } from 'node:path';
import { build } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { LAMBDA_NODE_TARGET } from '#infra/build.ts';
import type { ResourceUse } from '#lib/http/route.ts';
import { routeEntries } from '#lib/routes/index.ts';

/**
 * A function bundles only the AWS clients it runs: the SES client only where the route table
 * says `uses: ['mail']`, the S3 client only where it says `uses: ['images']`, the Secrets Manager
 * client only where it says `uses: ['secret']` (the functions granted those services). It follows from the imports alone, so one stray import (a mailer
 * picked in a module every function loads) would put SES in every cold start; this test builds
 * every handler once, in memory, with the bundling options of infra/build.ts that decide what
 * is pulled in, and reads the metafile.
 */
const ROOT = resolve(import.meta.dirname, '..', '..');

let inputsByFunction: Map<string, string[]>;
/** Every import edge of the build: the importing file, the imported one, and how (`import-statement`, `dynamic-import`, ...). */
let importEdges: { from: string; to: string; kind: string }[];

beforeAll(async () => {
  const entries = routeEntries();
  const result = await build({
    entryPoints: Object.fromEntries(entries.map(([name]) => [name, resolve(ROOT, 'functions', `${name}.ts`)])),
    outdir: 'bundles',
    absWorkingDir: ROOT,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: LAMBDA_NODE_TARGET,
    mainFields: ['module', 'main'],
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  inputsByFunction = new Map(
    Object.entries(result.metafile.outputs)
      .filter(([file]) => file.endsWith('.js'))
      .map(([file, output]) => [file.replace(/^bundles\/|\.js$/g, ''), Object.keys(output.inputs)]),
  );
  expect([...inputsByFunction.keys()].sort()).toEqual(entries.map(([name]) => name).sort());
  importEdges = Object.entries(result.metafile.inputs).flatMap(([from, input]) => input.imports.map((edge) => ({ from, to: edge.path, kind: edge.kind })));
}, 120_000);

const functionsUsing = (use: ResourceUse) =>
  routeEntries()
    .filter(([, spec]) => spec.uses?.includes(use))
    .map(([name]) => name)
    .sort();

const functionsBundling = (packageName: string, under = 'node_modules/') =>
  [...inputsByFunction]
    .filter(([, inputs]) => inputs.some((input) => (under === '' ? input === packageName : input.includes(`${under}${packageName}/`))))
    .map(([name]) => name)
    .sort();

describe('function bundles', () => {
  it('carry the SES client exactly in the functions that send mail', () => {
    expect(functionsUsing('mail').length).toBeGreaterThan(0);
    expect(functionsBundling('@aws-sdk/client-sesv2')).toEqual(functionsUsing('mail'));
  });

  it('carry the Secrets Manager client exactly in the functions that read the server secret (keyed hashes)', () => {
    expect(functionsUsing('secret')).toEqual([
      'auth-login',
      'auth-store-login',
      'auth-store-verify',
      'auth-verify',
      'command-list',
      'order-list',
      'payment-provider-get',
      'payment-provider-list',
      'payment-provider-put',
      'webhook-delivery-list',
      'webstore-checkout',
      'webstore-order-list',
      'webstore-order-payment',
      'webstore-quote',
    ]);
    expect(functionsBundling('@aws-sdk/client-secrets-manager')).toEqual(functionsUsing('secret'));
  });

  it('carry the KMS client (the payment secrets keyring) exactly in the functions granted the payment secrets key', () => {
    const keyUsers = [...new Set([...functionsUsing('provider-secrets-seal'), ...functionsUsing('provider-secrets-open')])].sort();
    expect(keyUsers).toEqual([
      'order-payment-refund',
      'order-payment-sync',
      'order-refund',
      'payment-notify',
      'payment-provider-put',
      'payment-test-action',
      'webstore-checkout',
      'webstore-order-payment',
      'webstore-order-status',
    ]);
    expect(functionsBundling('@aws-sdk/client-kms')).toEqual(keyUsers);
  });

  it('reach each payment provider adapter only through the registry of dynamic imports, so a request for one provider never runs another', () => {
    const adapters = ['lib/payments/mercadopago.ts', 'lib/payments/stripe.ts', 'lib/payments/paypal.ts'];
    const into = importEdges.filter((edge) => adapters.includes(edge.to));
    expect(into.length).toBeGreaterThan(0);
    expect(into.filter((edge) => edge.kind !== 'dynamic-import' || edge.from !== 'lib/payments/index.ts')).toEqual([]);
    // And no adapter reaches another (PayPal shares the line rule through lib/payments/lines.ts, not through Stripe's module).
    expect(importEdges.filter((edge) => adapters.includes(edge.from) && adapters.includes(edge.to))).toEqual([]);
    // The functions that carry them are exactly those that load the registry.
    const withRegistry = functionsBundling('lib/payments/index.ts', '');
    expect(withRegistry.length).toBeGreaterThan(0);
    for (const adapter of adapters) expect(functionsBundling(adapter, ''), adapter).toEqual(withRegistry);
  });

  it('carry the S3 client exactly in the image functions', () => {
    expect(functionsUsing('images').length).toBeGreaterThan(0);
    expect(functionsBundling('@aws-sdk/client-s3')).toEqual(functionsUsing('images'));
  });
});
