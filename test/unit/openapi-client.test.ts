import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TYPESCRIPT_CLIENT_TYPES, typescriptClientTypes } from '#infra/local/typescript-client.ts';
import { buildOpenApiDocument } from '#lib/openapi.ts';
import { routes } from '#lib/routes/index.ts';

/**
 * The document makes a usable typed client: openapi-typescript generates its types, and a small
 * program an integrator would write with openapi-fetch compiles against them under strict tsc
 * (a package list with `limit: 100`, a storefront call with `x-store-domain`, a checkout).
 * Programs that pass wrong types must not compile, or the check would prove nothing.
 * Generated as the README says (`--default-non-nullable false`): a request field with a default
 * (`coupon`, default null) may be left out, which openapi-typescript's default would forbid.
 */
const dir = resolve('.build', `typed-client-${process.pid}`);

const PROGRAM = `
import createClient from 'openapi-fetch';
import type { components, paths } from './api';

type Package = components['schemas']['PackageResource'];
const client = createClient<paths>({ baseUrl: 'http://127.0.0.1:3000' });

export async function integrator(): Promise<number[]> {
  const packages = await client.GET('/v1/app/package', { params: { query: { limit: 100, page: 1 } }, headers: { authorization: 'Bearer sat_...' } });
  const listed: Package[] = packages.data?.data ?? [];
  const total: number | undefined = packages.data?.meta.total;
  const storefront = await client.GET('/v1/webstore/package', { params: { query: { limit: 100 }, header: { 'x-store-domain': 'demo.localhost' } } });
  const checkout = await client.POST('/v1/webstore/checkout', {
    params: { header: { 'x-store-domain': 'demo.localhost' } },
    headers: { authorization: 'Bearer sbt_...' },
    body: { cart: [{ package_id: 1, quantity: 2, fields: { server: 'survival' } }], client_name: 'Steve', client_email: 'steve@example.com', client_identifier: 'Steve', gateway: 'pix', terms: true },
  });
  if (checkout.error) console.log(checkout.error.errors[0]?.message);
  const tag = await client.POST('/v1/app/tag', { body: { name: 'Sale', color: '#ef4444' } });
  return [...listed.map((item) => item.id), total ?? 0, ...(storefront.data?.data.map((item) => item.id) ?? []), tag.data?.id ?? 0];
}
`;

/** A program to compile as a file of `folder` (so its relative imports resolve there). */
type Variant = { program: string; folder: string };

/**
 * Strict tsc's complaints about each variant, all checked in ONE program: the lib files, openapi-fetch
 * and the generated types are parsed and checked once instead of once a variant (about 1 s of CPU
 * each). A variant's list holds its own file's diagnostics and every other shared file's, as
 * `getPreEmitDiagnostics` of a program of that variant alone would; the variants are modules, so
 * none sees another's declarations.
 */
function compileEach<Name extends string>(variants: Record<Name, Variant>): Record<Name, string[]> {
  const files = new Map<string, Name>();
  for (const [name, { program, folder }] of Object.entries<Variant>(variants)) {
    const file = join(folder, `program-${process.pid}-${Math.random().toString(36).slice(2)}.ts`);
    writeFileSync(file, program);
    files.set(file, name as Name);
  }
  try {
    const compiled = ts.createProgram([...files.keys()], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      allowImportingTsExtensions: true,
      skipLibCheck: true,
    });
    const diagnostics = ts.getPreEmitDiagnostics(compiled);
    const complaintsOf = (file: string) =>
      diagnostics
        .filter((diagnostic) => !diagnostic.file || !files.has(diagnostic.file.fileName) || diagnostic.file.fileName === file)
        .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    return Object.fromEntries([...files].map(([file, name]) => [name, complaintsOf(file)])) as Record<Name, string[]>;
  } finally {
    for (const file of files.keys()) rmSync(file, { force: true });
  }
}

const exampleFolder = resolve('clients', 'typescript');
const example = readFileSync(join(exampleFolder, 'example.ts'), 'utf8');

let complaints: Record<string, string[]>;
beforeAll(async () => {
  mkdirSync(dir, { recursive: true });
  const document = JSON.parse(JSON.stringify(buildOpenApiDocument(routes)));
  writeFileSync(join(dir, 'api.ts'), astToString(await openapiTS(document, { defaultNonNullable: false })));
  const inDir = (program: string) => ({ program, folder: dir });
  const besideExample = (program: string) => ({ program, folder: exampleFolder });
  complaints = compileEach({
    integrator: inDir(PROGRAM),
    stringLimit: inDir(PROGRAM.replace('query: { limit: 100, page: 1 }', "query: { limit: '100', page: 1 }")),
    storefrontWithoutDomain: inDir(
      PROGRAM.replace("{ params: { query: { limit: 100 }, header: { 'x-store-domain': 'demo.localhost' } } }", '{ params: { query: { limit: 100 } } }'),
    ),
    checkoutWithoutCart: inDir(PROGRAM.replace("body: { cart: [{ package_id: 1, quantity: 2, fields: { server: 'survival' } }], ", 'body: { ')),
    example: besideExample(example),
    exampleStringLimit: besideExample(example.replace('query: { limit: 100, page: 1 }', "query: { limit: '100', page: 1 }")),
    // A checkout without x-store-domain, and one without its cart.
    exampleCheckoutWithoutDomain: besideExample(example.replace('    params: { header },\n', '')),
    exampleCheckoutWithoutCart: besideExample(example.replace('cart: [{ package_id: first.id, quantity: 1 }], ', '')),
  });
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a client generated from the OpenAPI document', () => {
  it('compiles an integrator program: limit as a number, x-store-domain as a header parameter, a typed checkout', () => {
    expect(complaints.integrator).toEqual([]);
  });

  it('refuses what the API refuses: a string limit, a storefront call without x-store-domain, a checkout without its cart', () => {
    expect(complaints.stringLimit!.join('\n')).toMatch(/string.*number|number.*string/);
    expect(complaints.storefrontWithoutDomain).not.toEqual([]);
    expect(complaints.checkoutWithoutCart).not.toEqual([]);
  });
});

/** The client integrators copy (clients/typescript): its types are the document's, and its example compiles. */
describe('clients/typescript', () => {
  it(`${TYPESCRIPT_CLIENT_TYPES} is what npm run generate writes from this route table`, async () => {
    expect(readFileSync(TYPESCRIPT_CLIENT_TYPES, 'utf8') === (await typescriptClientTypes()), `${TYPESCRIPT_CLIENT_TYPES} is stale: run npm run generate`).toBe(true);
  }, 60_000);

  it('compiles its example under strict tsc, and refuses the example with a call the API would refuse', () => {
    expect(complaints.example).toEqual([]);
    expect(complaints.exampleStringLimit!.join('\n')).toMatch(/string.*number|number.*string/);
    expect(complaints.exampleCheckoutWithoutDomain).not.toEqual([]);
    expect(complaints.exampleCheckoutWithoutCart).not.toEqual([]);
  });
});
