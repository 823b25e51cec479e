import { rmSync } from 'node:fs';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteSpec } from '#lib/http/route.ts';
import { alarmCountOf } from '#infra/constructs/function-group-alarms.ts';
import { consumerEntries } from '#lib/routes/consumers.ts';
import { jobEntries } from '#lib/routes/jobs.ts';
import { routeAreas, routeEntries } from '#lib/routes/index.ts';
import { resourceCountOf, resourcesOf, stubBundles, synthesize, type Areas } from './synthesize.ts';

/**
 * CloudFormation holds at most 500 resources a stack. 300 leaves an area room for the routes of
 * the next issues, and fails here long before a deploy would: split the area file then.
 */
const MAX_RESOURCES_PER_STACK = 300;
/** Function, role, policy, log group, integration, route, permission. */
const RESOURCES_PER_ROUTE = 7;

/** Every area twice as large (a copy of each route under another path), and a new area of 30 routes. */
function grownAreas(): Areas {
  const grown: Areas = Object.fromEntries(
    Object.entries(routeAreas).map(([area, routes]) => [
      area,
      { ...routes, ...Object.fromEntries(Object.entries(routes).map(([name, spec]) => [`${name}-copy`, { ...spec, path: `${spec.path}/copy` }])) },
    ]),
  );
  const newRoute = (index: number): RouteSpec => ({
    method: 'POST',
    path: `/v1/app/new/${index}`,
    api: 'api',
    credential: 'operator',
    access: 'write',
    uses: ['images', 'mail'],
    summary: 'new',
    tag: 'New',
  });
  grown.new = Object.fromEntries(Array.from({ length: 30 }, (_, index) => [`new-${index}`, newRoute(index)]));
  return grown;
}

const routeKeyOf = (spec: RouteSpec) => `${spec.method} ${spec.path}`;

let functionsDir: string;
beforeAll(() => {
  functionsDir = stubBundles(Object.values(grownAreas()).flatMap((routes) => Object.keys(routes)));
});
afterAll(() => rmSync(functionsDir, { recursive: true, force: true }));

describe('stacks sized by the route table', () => {
  let synthesized: ReturnType<typeof synthesize>;
  let grown: ReturnType<typeof synthesize>;
  beforeAll(() => {
    synthesized = synthesize({ functionsDir });
    grown = synthesize({ functionsDir, areas: grownAreas() });
  });

  it(`keeps every stack under ${MAX_RESOURCES_PER_STACK} resources`, () => {
    for (const stack of synthesized.all) expect(resourceCountOf(stack), stack.stackName).toBeLessThanOrEqual(MAX_RESOURCES_PER_STACK);
  });

  it(`costs ${RESOURCES_PER_ROUTE} resources a route and its share of the area's alarms, all in its area stack: the data, HTTP and stage stacks do not grow with routes`, () => {
    const { data, http, areas } = synthesized.stacks;
    for (const [area, stack] of areas) {
      const routeCount = Object.keys(routeAreas[area as keyof typeof routeAreas]).length;
      expect(resourceCountOf(stack), area).toBe(routeCount * RESOURCES_PER_ROUTE + alarmCountOf(routeCount));
    }
    expect(resourceCountOf(grown.stacks.data)).toBe(resourceCountOf(data));
    expect(resourceCountOf(grown.stacks.http)).toBe(resourceCountOf(http));
    // The public storefront routes' throttles are properties of the stage, not resources.
    expect(resourceCountOf(grown.stacks.apiStage)).toBe(resourceCountOf(synthesized.stacks.apiStage));
  });

  it('puts every route of the table in exactly one stack, its area stack: one function and one route', () => {
    const { all, stacks } = synthesized;
    const countAll = (type: string) => all.reduce((sum, stack) => sum + Object.keys(resourcesOf(Template.fromStack(stack), type)).length, 0);
    // A function per route, one per scheduled job (in the jobs stack, with no route), one per consumer (the webhook stack's router and sender),
    // and the docs stack's BucketDeployment handler (run by CloudFormation at deploy time, never by a request).
    expect(countAll('AWS::Lambda::Function')).toBe(routeEntries().length + jobEntries().length + consumerEntries().length + 1);
    expect(countAll('AWS::ApiGatewayV2::Route')).toBe(routeEntries().length);
    expect([...stacks.areas.keys()]).toEqual(Object.keys(routeAreas));
    for (const [area, routes] of Object.entries(routeAreas)) {
      const stack = stacks.areas.get(area)!;
      expect([...stack.functions.keys()].sort(), area).toEqual(Object.keys(routes).sort());
      const routeKeys = Object.values(resourcesOf(Template.fromStack(stack), 'AWS::ApiGatewayV2::Route')).map((route) => route.Properties.RouteKey as string);
      expect(routeKeys.sort(), area).toEqual(Object.values(routes).map(routeKeyOf).sort());
    }
  });

  it('still fits when every area doubles and a new area of 30 routes arrives', () => {
    expect(grown.stacks.areas.size).toBe(Object.keys(routeAreas).length + 1);
    for (const stack of grown.all) expect(resourceCountOf(stack), stack.stackName).toBeLessThanOrEqual(MAX_RESOURCES_PER_STACK);
  });
});
