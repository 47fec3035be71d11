/** The endpoint page's agent channel: long poll or WebSocket, since when, and the last delivery's latency. */
import { useEffect, useState } from 'preact/hooks';
import { Message } from '../components/message';
import { describeError } from '../services/client';
import { getAgentChannel, type AgentChannelState } from '../services/agent-channel';

const KIND_TEXT: Record<string, string> = { LONG_POLL: 'long poll', WEBSOCKET: 'WebSocket' };

export function AgentChannelPanel(props: { endpointId: string }) {
  const [state, setState] = useState<AgentChannelState | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => void getAgentChannel(props.endpointId).then(setState, (e: unknown) => setError(describeError(e))), [props.endpointId]);
  return (
    <section class="panel" id="channel" aria-labelledby="channel-title">
      <h3 id="channel-title">Agent channel</h3>
      <Message kind="error" text={error} testId="channel-error" />
      {state && (
        <dl class="fields">
          <div data-field="channel">
            <dt>channel</dt>
            <dd>{state.kind ? `${KIND_TEXT[state.kind] ?? state.kind} since ${new Date(String(state.since)).toLocaleString('en-GB')}` : 'none held'}</dd>
          </div>
          <div data-field="lastDeliveryLatency">
            <dt>last delivery</dt>
            <dd>
              {state.lastDeliveryLatencyMs !== undefined
                ? `${state.lastDeliveryLatencyMs} ms after its command was created (${new Date(String(state.lastDeliveryAt)).toLocaleString('en-GB')})`
                : 'none yet'}
            </dd>
          </div>
        </dl>
      )}
    </section>
  );
}
