/**
 * The agent channel's operations (extensions; docs/adr/0113-agent-channel.md): the agent's
 * long poll, which the same path also serves upgraded to a WebSocket (src/http/agent-channel/websocket.ts),
 * and the channel state the console's endpoint page shows.
 */
import Joi from 'joi';
import { ForbiddenError } from '../../errors.js';
import { READERS } from '../../access/principal.js';
import { LongPollChannel } from '../../http/agent-channel/long-poll.js';
import { AGENT_CHANNEL_PATH } from '../../http/agent-channel/websocket.js';
import { routeDefaults, ok, type RouteSpec } from '../../http/routes.js';
import { id, isoDateOut } from '../../http/schemas.js';
import { endpointCommandMessage } from '../commands/routes.js';
import type { EndpointService } from '../endpoints/service.js';
import { CHANNEL_KINDS } from './model.js';
import type { AgentChannelService } from './service.js';

const route = routeDefaults({ tag: 'agent-channel', sec: true, roles: ['agent'], errors: [400, 401, 403, 503] });

const channelQuery = Joi.object<{ wait?: number }>({
  wait: Joi.number()
    .integer()
    .min(0)
    .description('seconds to hold the request while nothing is ready; 0 answers at once; the server clamps it to ECS_CHANNEL_WAIT_SECONDS (default: that, less up to 10 % of jitter)'),
});

const channelState = Joi.object({
  endpointId: Joi.string().required(),
  kind: Joi.string().valid(...CHANNEL_KINDS).description('the newest held channel: a long poll or a WebSocket'),
  since: isoDateOut.description('when the newest held channel was taken up'),
  held: Joi.number().integer().min(0).required().description('channels the agent holds on the instance that answered (two during a reconnect)'),
  lastDeliveryLatencyMs: Joi.number().integer().min(0).description('the last delivery through a channel: command created → written to the agent'),
  lastDeliveryAt: isoDateOut,
})
  .label('AgentChannelState')
  .meta({ className: 'AgentChannelState' })
  .example({ endpointId: 'ep-7f3a9c', kind: 'WEBSOCKET', since: '2026-11-27T08:00:00.000Z', held: 1, lastDeliveryLatencyMs: 42, lastDeliveryAt: '2026-11-27T08:05:00.000Z' });

export function agentChannelRoutes(channels: AgentChannelService, endpoints: EndpointService): RouteSpec[] {
  return [
    route<Record<string, never>, { wait?: number }>({
      operationId: 'holdAgentChannel',
      method: 'GET',
      path: AGENT_CHANNEL_PATH,
      summary:
        "The calling agent's commands as soon as they are ready: held until at least one is (answered and moved to SENT, with their delivery records) or the wait ends ([]). The same path upgraded to a WebSocket sends each message as one JSON text frame. Only the agent token of an endpoint holds it.",
      lane: 'checkin',
      extension: true,
      query: channelQuery,
      responses: { 200: { description: 'the ready messages, oldest first (each now SENT), or [] when the wait ended', schema: Joi.array().items(endpointCommandMessage) } },
      handler: async ({ query, access, onClose }) => {
        const endpointId = access.principal.endpointId;
        if (access.role !== 'agent' || !endpointId) throw new ForbiddenError(`role ${access.role} may not hold an agent channel`);
        const waitMs = channels.waitMs(query.wait);
        const ch = new LongPollChannel(endpointId, access);
        onClose?.(() => {
          ch.abandon();
          channels.close(ch, false);
        });
        await channels.open(ch, waitMs > 0 ? Date.now() + waitMs : undefined);
        if (ch.answered || waitMs === 0) {
          channels.close(ch, false);
          return ok(ch.answered ? await ch.answer() : []);
        }
        return {
          status: 200,
          // Chained rather than awaited: a held poll keeps no suspended frame here.
          hold: () => ch.answer().then(ok).finally(() => channels.close(ch, false)),
        };
      },
    }),
    route<{ id: string }>({
      operationId: 'getEndpointAgentChannel',
      method: 'GET',
      path: '/endpoint/{id}/channel',
      summary: "The endpoint's agent channel as the answering instance holds it (kind, since when) and its last delivery's latency",
      tag: 'endpoint',
      roles: READERS,
      lane: 'interactive',
      extension: true,
      errors: [401, 403, 404, 503],
      params: Joi.object({ id: id.required() }),
      responses: { 200: { description: 'OK', schema: channelState } },
      handler: async ({ params, access }) => {
        await endpoints.getVisible(params.id, access);
        return ok(channels.state(params.id));
      },
    }),
  ];
}
