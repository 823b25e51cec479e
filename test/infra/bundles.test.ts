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
}, 120_000);

const functionsUsing = (use: ResourceUse) =>
  routeEntries()
    .filter(([, spec]) => spec.uses?.includes(use))
    .map(([name]) => name)
    .sort();

const functionsBundling = (packageName: string) =>
  [...inputsByFunction]
    .filter(([, inputs]) => inputs.some((input) => input.includes(`node_modules/${packageName}/`)))
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

  it('carry the S3 client exactly in the image functions', () => {
    expect(functionsUsing('images').length).toBeGreaterThan(0);
    expect(functionsBundling('@aws-sdk/client-s3')).toEqual(functionsUsing('images'));
  });
});
