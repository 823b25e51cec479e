import * as v from 'valibot';
import { route } from '#lib/http/route.ts';
import { commandCursorPage, commandListQuery, commandResource } from '#lib/schemas/command.ts';
import { idParams, pageOf, pageQuery } from '#lib/schemas/common.ts';
import { ackBody, ackResponse, claimBody, claimResponse } from '#lib/schemas/delivery.ts';
import { serverCreateBody, serverKeyResource, serverPatchBody, serverResource } from '#lib/schemas/server.ts';

/** Delivery to game servers (extensions section 9): servers and their keys, claim and ack, the operator's command views. */
export const deliveryRoutes = {
  'server-create': route({
    method: 'POST', path: '/v1/app/server', api: 'api', credential: 'operator', access: 'write', tag: 'Server', rerunsAfterLostAnswer: true,
    summary: 'Register a game server', body: serverCreateBody, response: serverResource,
    example: { body: { name: 'Survival' } },
  }),
  'server-list': route({
    method: 'GET', path: '/v1/app/server', api: 'api', credential: 'operator', access: 'read', tag: 'Server',
    summary: 'List game servers (page mode, id order)', query: pageQuery, response: pageOf(serverResource),
    example: { query: { page: '1', limit: '20' } },
  }),
  'server-get': route({
    method: 'GET', path: '/v1/app/server/{serverId}', api: 'api', credential: 'operator', access: 'read', tag: 'Server',
    summary: 'Get a game server (last_seen_at: its last claim)', params: idParams('serverId'), response: serverResource,
  }),
  'server-update': route({
    method: 'PATCH', path: '/v1/app/server/{serverId}', api: 'api', credential: 'operator', access: 'write', tag: 'Server',
    summary: 'Rename a game server', params: idParams('serverId'), body: serverPatchBody, response: serverResource,
    example: { params: { serverId: '1' }, body: { name: 'Survival EU' } },
  }),
  'server-delete': route({
    method: 'DELETE', path: '/v1/app/server/{serverId}', api: 'api', credential: 'operator', access: 'write', tag: 'Server',
    summary: 'Delete a game server: revokes its keys, cancels the PENDING commands bound to it and gives the any-server commands it holds back to the queue (409 while a package names it)', params: idParams('serverId'), status: 204,
  }),
  'server-key-create': route({
    method: 'POST', path: '/v1/app/server/{serverId}/key', api: 'api', credential: 'operator', access: 'write', tag: 'Server',
    summary: 'Issue a delivery key for the server (shown once; a server may hold several)', params: idParams('serverId'), response: serverKeyResource,
  }),
  'delivery-claim': route({
    method: 'POST', path: '/v1/delivery/claim', api: 'api', credential: 'apiKey', scope: 'delivery', access: 'write', tag: 'Delivery',
    summary: "Lease the server's due commands (and any-server ones: the claimer's only while the lease lives, then any server's again), oldest first, each in its order's sequence",
    body: claimBody, response: claimResponse,
    example: { body: { online: ['Steve'], limit: 50, lease_seconds: 60 } },
  }),
  'delivery-ack': route({
    method: 'POST', path: '/v1/delivery/ack', api: 'api', credential: 'apiKey', scope: 'delivery', access: 'write', tag: 'Delivery',
    summary: 'Report the results of a lease: DONE is final, FAILED backs off (30 s x 2^(tries-1), at most 1 h), the 5th failure is DEAD',
    body: ackBody, response: ackResponse,
    // A repeated ack changes nothing (lib/domain/delivery.ts `ackOutcome`): the retry after a lost answer runs again.
    rerunsAfterLostAnswer: true,
    // A lease lives 60 s: `npm run invoke` takes one for the demo server just before.
    example: { body: { lease_id: '{{lease_id}}', results: [{ id: '{{leased_command_id}}', status: 'DONE', response: 'ok' }] } },
  }),
  'command-list': route({
    method: 'GET', path: '/v1/app/command', api: 'api', credential: 'operator', access: 'read', uses: ['secret'], tag: 'Command',
    summary: 'List commands, newest first (cursor mode: page_cursor, page_size); filters status, server, order',
    query: commandListQuery, response: commandCursorPage,
    example: { query: { page_cursor: '', page_size: '50', status: 'DEAD' } },
  }),
  'command-get': route({
    method: 'GET', path: '/v1/app/command/{commandId}', api: 'api', credential: 'operator', access: 'read', tag: 'Command',
    summary: 'Get a command with its delivery state', params: idParams('commandId'), response: commandResource,
  }),
  'command-retry': route({
    method: 'POST', path: '/v1/app/command/{commandId}/retry', api: 'api', credential: 'operator', access: 'write', tag: 'Command',
    summary: 'Put a FAILED, DEAD or CANCELED command back on the queue with tries 0 (PENDING or DONE: 409)', params: idParams('commandId'), response: commandResource,
    // The demo seed's command reported FAILED (order 5's).
    example: { params: { commandId: '4' } },
  }),
  'order-command-list': route({
    method: 'GET', path: '/v1/app/order/{orderId}/command', api: 'api', credential: 'operator', access: 'read', tag: 'Command',
    summary: 'Every command of the order, all stages, in hand-out order', params: idParams('orderId'), response: v.array(commandResource),
  }),
} as const;
