import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument } from '#lib/openapi.ts';
import { routes } from '#lib/routes/index.ts';

/**
 * The API reference page: one self-contained HTML file (no script, no CDN) rendered from the
 * OpenAPI document at build time, so it is served as a static file (CloudFront/S3 on AWS, `/docs`
 * on the local stack) and never costs a Lambda. Every operation shows its method, path, summary,
 * credentials, parameters, request body and responses with their schemas.
 *
 * `npm run build` writes it to `.build/docs/index.html`.
 */
type Json = Record<string, unknown>;
type OpenApi = ReturnType<typeof buildOpenApiDocument>;

const projectRoot = fileURLToPath(new URL('..', import.meta.url));
export const defaultDocsFile = resolve(projectRoot, '.build/docs/index.html');

const escape = (text: unknown) =>
  String(text).replace(/[&<>"']/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]!);

/** A schema's type in one line: `string`, `array of integer`, `"A" | "B"`, `object | null`. */
function typeOf(schema: Json): string {
  if (typeof schema.$ref === 'string') return schema.$ref.split('/').pop()!;
  if ('const' in schema) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum)) return schema.enum.map((value) => JSON.stringify(value)).join(' | ');
  const variants = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (variants) return variants.map(typeOf).join(' | ');
  const type = Array.isArray(schema.type) ? schema.type.join(' | ') : String(schema.type ?? 'any');
  return type === 'array' && schema.items ? `array of ${typeOf(schema.items as Json)}` : type;
}

const CONSTRAINTS = ['format', 'minimum', 'maximum', 'exclusiveMinimum', 'minLength', 'maxLength', 'minItems', 'maxItems', 'pattern', 'default'] as const;

function constraintsOf(schema: Json): string {
  return CONSTRAINTS.filter((name) => schema[name] !== undefined)
    .map((name) => `<span class="c">${name}: ${escape(typeof schema[name] === 'string' ? schema[name] : JSON.stringify(schema[name]))}</span>`)
    .join(' ');
}

/** The object a schema describes, if any: itself, its array items, or one of its variants. */
function objectOf(schema: Json): Json | undefined {
  if (schema.properties) return schema;
  if (schema.items) return objectOf(schema.items as Json);
  for (const variant of ((schema.anyOf ?? schema.oneOf) as Json[] | undefined) ?? []) {
    const found = objectOf(variant);
    if (found) return found;
  }
  return undefined;
}

/** Properties as nested lists, so a reader sees the whole shape without following references. */
function renderSchema(schema: Json, nested = false): string {
  const object = objectOf(schema);
  if (!object) return `<p class="type">${escape(typeOf(schema))} ${constraintsOf(schema)}</p>`;
  const required = new Set((object.required as string[] | undefined) ?? []);
  const rows = Object.entries(object.properties as Record<string, Json>).map(([name, property]) => {
    const inner = objectOf(property) ? renderSchema(property, true) : '';
    return `<li><code>${escape(name)}</code> <span class="type">${escape(typeOf(property))}</span>${required.has(name) ? ' <span class="req">required</span>' : ''} ${constraintsOf(property)}${property.description ? ` <span class="d">${escape(property.description)}</span>` : ''}${inner}</li>`;
  });
  // A property's row already names its type; a body or response that is not a plain object says it here.
  const wrapper = nested || schema === object ? '' : `<p class="type">${escape(typeOf(schema))}</p>`;
  return `${wrapper}<ul class="schema">${rows.join('')}</ul>`;
}

function schemaOfContent(content: unknown): Json | undefined {
  const media = content as Record<string, { schema?: Json }> | undefined;
  return media ? Object.values(media)[0]?.schema : undefined;
}

function renderOperation(path: string, method: string, operation: Json, doc: OpenApi): string {
  const id = String(operation.operationId);
  const security = (operation.security as Record<string, string[]>[]).map((alternative) => Object.keys(alternative).join(' + ') || 'none');
  const parameters = operation.parameters as { name: string; in: string; required: boolean; schema: Json }[];
  const body = schemaOfContent((operation.requestBody as Json | undefined)?.content);
  const responses = Object.entries(operation.responses as Record<string, Json>).map(([status, response]) => {
    const schema = schemaOfContent(response.content);
    const reference = schema && typeof schema.$ref === 'string' ? (doc.components.schemas as Record<string, Json>)[schema.$ref.split('/').pop()!] : schema;
    const hasShape = reference && (reference.properties || reference.items || reference.anyOf);
    return `<details${status.startsWith('2') ? ' open' : ''}><summary><b>${escape(status)}</b> ${escape(response.description)}</summary>${hasShape ? renderSchema(reference) : ''}</details>`;
  });
  const servers = operation.servers ? `<p class="muted">Served on the store's own domain: <code>https://{store_domain}${escape(path)}</code></p>` : '';
  return `<section class="op" id="${escape(id)}" data-method="${escape(method.toUpperCase())}" data-path="${escape(path)}">
<h3><span class="m ${escape(method)}">${escape(method.toUpperCase())}</span> <code>${escape(path)}</code></h3>
<p>${escape(operation.summary)}</p>${servers}
<p class="muted">Credential: ${security.map(escape).join(' or ') || 'none'}</p>
${parameters.length ? `<h4>Parameters</h4><table><tr><th>name</th><th>in</th><th>type</th><th></th></tr>${parameters.map((p) => `<tr><td><code>${escape(p.name)}</code>${p.required ? ' <span class="req">required</span>' : ''}</td><td>${escape(p.in)}</td><td>${escape(typeOf(p.schema))}</td><td>${constraintsOf(p.schema)}</td></tr>`).join('')}</table>` : ''}
${body ? `<h4>Request body</h4>${renderSchema(body)}` : ''}
<h4>Responses</h4>${responses.join('')}
</section>`;
}

export function renderApiReference(doc: OpenApi): string {
  const operations = Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ path, method, operation: operation as Json })));
  const tags = [...new Set(operations.map(({ operation }) => (operation.tags as string[])[0]!))];
  const nav = tags
    .map((tag) => `<h2>${escape(tag)}</h2><ul>${operations.filter(({ operation }) => (operation.tags as string[])[0] === tag).map(({ path, method, operation }) => `<li><a href="#${escape(operation.operationId)}" title="${escape(path)}"><span class="m ${escape(method)}">${escape(method.toUpperCase())}</span> ${escape(path)}</a></li>`).join('')}</ul>`)
    .join('');
  const body = tags
    .map((tag) => `<h2 class="tag">${escape(tag)}</h2>${operations.filter(({ operation }) => (operation.tags as string[])[0] === tag).map(({ path, method, operation }) => renderOperation(path, method, operation, doc)).join('')}`)
    .join('');
  const schemes = Object.entries(doc.components.securitySchemes).map(([name, scheme]) => `<li><code>${escape(name)}</code>: ${escape(scheme.description)}</li>`).join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(doc.info.title)} API reference</title>
<style>
body{margin:0;font-family:system-ui,sans-serif;color:#111827;display:grid;grid-template-columns:340px 1fr}
nav{position:sticky;top:0;height:100vh;overflow:auto;background:#f3f4f6;padding:1rem;box-sizing:border-box;font-size:.8rem}
nav h2{font-size:.8rem;text-transform:uppercase;color:#6b7280;margin:1rem 0 .3rem}nav ul{list-style:none;padding:0;margin:0}nav a{color:inherit;text-decoration:none;display:block;padding:.15rem 0;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
main{padding:1rem 2rem;max-width:960px}.op{border-top:1px solid #e5e7eb;padding:1rem 0}h2.tag{margin-top:2rem}h3{margin:.2rem 0;font-size:1rem}h4{margin:.8rem 0 .3rem;font-size:.9rem}
.m{display:inline-block;min-width:3.6rem;text-align:center;font:700 .7rem monospace;padding:.15rem .3rem;border-radius:4px;color:#fff;background:#6b7280}
.m.get{background:#2563eb}.m.post{background:#059669}.m.patch{background:#d97706}.m.put{background:#7c3aed}.m.delete{background:#dc2626}
.muted,.d{color:#6b7280;font-size:.85rem}.type{color:#7c3aed;font-size:.85rem}.req{color:#dc2626;font-size:.75rem}.c{font-size:.75rem;background:#f3f4f6;padding:0 .3rem;border-radius:3px}
ul.schema{font-size:.9rem;list-style:none;padding-left:1rem;border-left:2px solid #e5e7eb}table{border-collapse:collapse;font-size:.9rem}td,th{padding:.2rem .6rem;border-bottom:1px solid #e5e7eb;text-align:left}
details{margin:.2rem 0}summary{cursor:pointer}
</style></head>
<body><nav><strong>${escape(doc.info.title)} ${escape(doc.info.version)}</strong>${nav}</nav>
<main><h1>${escape(doc.info.title)} API reference</h1><p>${escape(doc.info.description)}</p>
<p>The OpenAPI document: <a href="/v1/openapi.json"><code>GET /v1/openapi.json</code></a>. Credentials:</p><ul>${schemes}</ul>
<p>Errors answer <code>{errors: [{message, code?, field?}]}</code> (the handoff route: <code>{error: CODE}</code>).</p>
${body}</main></body></html>
`;
}

/** Written by `npm run build` beside the function bundles; the CDK ships it as a static file. */
export function writeApiReference(file = defaultDocsFile): string {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, renderApiReference(buildOpenApiDocument(routes)));
  return file;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.log(`API reference written to ${relative(process.cwd(), writeApiReference())}`);
}
