/** Command messages to an endpoint: send one, list recent ones, read one (its status). */
import { API, client, unwrap } from './client';
import type { Schema } from './types';

export type CommandMessage = Schema<'EndpointCommandMessage'>;
export type CommandPage = Schema<'EndpointCommandMessagePage'>;

/** Queues a command message for the endpoint (POST /command-message/endpoint/{endpoint-id}). */
export function sendCommand(endpointId: string, module: string, name: string): Promise<CommandMessage> {
  return unwrap(
    client.POST(`${API}/command-message/endpoint/{endpoint-id}`, {
      params: { path: { 'endpoint-id': endpointId } },
      body: { module, name },
    }),
  );
}

/** The endpoint's command messages, one page. */
export function listCommands(endpointId: string, page = 0, size = 10): Promise<CommandPage> {
  return unwrap(
    client.GET(`${API}/command-message/endpoint/{endpoint-id}`, { params: { path: { 'endpoint-id': endpointId }, query: { page, size } } }),
  );
}

export function getCommand(id: string): Promise<CommandMessage> {
  return unwrap(client.GET(`${API}/command-message/{id}`, { params: { path: { id } } }));
}
