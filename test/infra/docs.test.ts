import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeApiReference } from '#infra/docs.ts';
import { DOCS_CONTENT_SECURITY_POLICY, DOCS_FILES } from '#infra/docs-headers.ts';
import { buildOpenApiDocument } from '#lib/openapi.ts';
import { routeEntries, routes } from '#lib/routes/index.ts';
import { resourcesOf, stubBundles, synthesize } from './synthesize.ts';

/**
 * The API reference on AWS: static files copied into the images bucket under docs/ and served by
 * the CDN's `/docs*` behaviour, with no Lambda answering a request; and the files themselves.
 */
let functionsDir: string;
let synthesized: ReturnType<typeof synthesize>;
let data: Template;
let docs: Template;
beforeAll(() => {
  functionsDir = stubBundles(routeEntries().map(([name]) => name));
  synthesized = synthesize({ functionsDir });
  data = Template.fromStack(synthesized.stacks.data);
  docs = Template.fromStack(synthesized.stacks.docs);
});
afterAll(() => rmSync(functionsDir, { recursive: true, force: true }));

const logicalIdOf = (template: Template, type: string) => {
  const ids = Object.keys(resourcesOf(template, type));
  expect(ids, type).toHaveLength(1);
  return ids[0]!;
};

describe('the API reference on AWS', () => {
  it('is a /docs* behaviour of the images CDN, on the same S3 origin, GET/HEAD over HTTPS, with its own CSP and a viewer-request function, and no Lambda', () => {
    const distribution = Object.values(resourcesOf(data, 'AWS::CloudFront::Distribution'))[0]!.Properties.DistributionConfig;
    const behaviors = distribution.CacheBehaviors as Record<string, any>[];
    expect(behaviors.map((behavior) => behavior.PathPattern)).toEqual(['/docs*']);
    const [behavior] = behaviors;
    expect(behavior!.TargetOriginId).toBe(distribution.DefaultCacheBehavior.TargetOriginId);
    expect(distribution.Origins).toHaveLength(1);
    expect(behavior!.ViewerProtocolPolicy).toBe('redirect-to-https');
    expect(behavior!.AllowedMethods).toEqual(['GET', 'HEAD']);
    expect(behavior!.LambdaFunctionAssociations).toBeUndefined();
    expect(behavior!.FunctionAssociations).toEqual([
      { EventType: 'viewer-request', FunctionARN: { 'Fn::GetAtt': [logicalIdOf(data, 'AWS::CloudFront::Function'), 'FunctionARN'] } },
    ]);

    const policies = resourcesOf(data, 'AWS::CloudFront::ResponseHeadersPolicy');
    const docsPolicy = policies[behavior!.ResponseHeadersPolicyId.Ref]!.Properties.ResponseHeadersPolicyConfig.SecurityHeadersConfig;
    expect(docsPolicy.ContentSecurityPolicy).toEqual({ ContentSecurityPolicy: DOCS_CONTENT_SECURITY_POLICY, Override: true });
    expect(docsPolicy.ContentTypeOptions).toEqual({ Override: true });
    expect(behavior!.ResponseHeadersPolicyId).not.toEqual(distribution.DefaultCacheBehavior.ResponseHeadersPolicyId);
  });

  it('answers /docs and /docs/ with docs/index.html through its CloudFront Function, and leaves every other path alone', () => {
    const fn = Object.values(resourcesOf(data, 'AWS::CloudFront::Function'))[0]!.Properties;
    expect(fn.FunctionConfig.Runtime).toBe('cloudfront-js-2.0');
    const handler = new Function(`${fn.FunctionCode}; return handler;`)() as (event: { request: { uri: string } }) => { uri: string };
    const rewrite = (uri: string) => handler({ request: { uri } }).uri;
    expect(rewrite('/docs')).toBe('/docs/index.html');
    expect(rewrite('/docs/')).toBe('/docs/index.html');
    expect(rewrite('/docs/swagger-ui.css')).toBe('/docs/swagger-ui.css');
    expect(rewrite('/docsx')).toBe('/docsx');
    expect(rewrite('/packages/1/2/a.png')).toBe('/packages/1/2/a.png');
  });

  it('is deployed by a BucketDeployment into the images bucket under docs/ only, invalidating /docs* on that CDN', () => {
    const { docs: stack, data: dataStack } = synthesized.stacks;
    const importOf = (value: string) => stack.resolve(value);
    const deployments = Object.values(resourcesOf(docs, 'Custom::CDKBucketDeployment'));
    expect(deployments).toHaveLength(1);
    const deployment = deployments[0]!.Properties;
    expect(deployment.DestinationBucketKeyPrefix).toBe('docs/');
    expect(deployment.DestinationBucketName).toEqual(importOf(dataStack.exports.imagesBucketName));
    expect(deployment.DistributionId).toEqual(importOf(dataStack.exports.imagesCdnId));
    expect(deployment.DistributionPaths).toEqual(['/docs*']);
    expect(deployment.SourceObjectKeys).toHaveLength(1);
    // The one function of the stack is the custom resource's handler, run by CloudFormation at deploy time.
    const functions = resourcesOf(docs, 'AWS::Lambda::Function');
    expect(Object.keys(functions)).toEqual([deployment.ServiceToken['Fn::GetAtt'][0]]);
    expect(Object.keys(resourcesOf(docs)).filter((id) => /ApiGateway|Permission/.test(resourcesOf(docs)[id]!.Type))).toEqual([]);
    expect(stack.dependencies).toEqual([dataStack]);
  });
});

describe('the API reference files (infra/docs.ts)', () => {
  let dir: string;
  beforeAll(() => {
    dir = writeApiReference(mkdtempSync(join(tmpdir(), 'store-api-docs-')));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('are exactly the files served under /docs, with the OpenAPI document of the route table', () => {
    expect(readdirSync(dir).sort()).toEqual(Object.keys(DOCS_FILES).sort());
    expect(JSON.parse(readFileSync(join(dir, 'openapi.json'), 'utf8'))).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument(routes))));
  });

  it('load nothing from another origin and run no inline script', () => {
    const html = readFileSync(join(dir, 'index.html'), 'utf8');
    const urls = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]);
    expect(urls.length).toBeGreaterThan(0);
    // Its own files, and the same-origin API's document (preloaded: it decides whether Try it out is on).
    for (const url of urls) expect([...Object.keys(DOCS_FILES).map((name) => `/docs/${name}`), '/v1/openapi.json'], url).toContain(url);
    expect(html).not.toMatch(/<script>|<script [^>]*>[^<]/);
    const initializer = readFileSync(join(dir, 'docs.js'), 'utf8');
    // The document of the page's own folder, fetched from the head (preload) while the bundle loads.
    expect(initializer).toContain("fetch('/docs/openapi.json')");
    expect(html).toContain('<link rel="preload" href="/docs/openapi.json" as="fetch" crossorigin>');
    // Swagger UI otherwise sends the document to validator.swagger.io for its badge.
    expect(initializer).toContain('validatorUrl: null');
    // Try it out only where the page's origin answers /v1/openapi.json; elsewhere no submit and no Authorize dialog.
    expect(initializer).toContain("fetch('/v1/openapi.json'");
    expect(initializer).toContain("supportedSubmitMethods: live ? ['get', 'post', 'put', 'patch', 'delete'] : []");
    expect(initializer).toContain('plugins: live ? [resolveAfterFirstPaint] : [resolveAfterFirstPaint, referenceOnly]');
  });
});
