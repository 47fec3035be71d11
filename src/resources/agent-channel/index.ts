/** Builds the agent channel: this instance's held agents, their wake signals, delivery and presence (docs/adr/0113-agent-channel.md). */
import type { BaseDeps } from '../deps.js';
import { CommandExpiry } from '../commands/expiry.js';
import { ReadyMessages } from '../commands/ready.js';
import type { CommandService } from '../commands/service.js';
import { CommandMessageStore } from '../commands/store.js';
import type { EndpointService } from '../endpoints/service.js';
import { AgentChannelService, type ChannelPresence, type WakeFeed } from './service.js';

export function createAgentChannel(
  { config, store, log }: BaseDeps,
  deps: { commands: CommandService; endpoints: EndpointService; presence: ChannelPresence; feed: WakeFeed },
): AgentChannelService {
  const ready = new ReadyMessages(
    new CommandMessageStore(store),
    new CommandExpiry({ ttlSeconds: config.commandTtlSeconds, maxRetries: config.commandMaxRetries }),
  );
  const channel = new AgentChannelService(ready, deps.commands, deps.presence, deps.endpoints.connections, deps.feed, config.channel, log);
  // Every message that becomes ready through this instance wakes its agent here and, through the feed, everywhere.
  deps.commands.ready = (endpointId) => channel.commandReady(endpointId);
  return channel;
}
