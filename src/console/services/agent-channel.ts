/** An agent's channel as the answering instance holds it (GET /endpoint/{id}/channel, extension). */
import { API, client, unwrap } from './client';
import type { Schema } from './types';

export type AgentChannelState = Schema<'AgentChannelState'>;

export function getAgentChannel(endpointId: string): Promise<AgentChannelState> {
  return unwrap(client.GET(`${API}/endpoint/{id}/channel`, { params: { path: { id: endpointId } } }));
}
