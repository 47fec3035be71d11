/** An endpoint's recent command messages, one watched until it ends, and sending a command. */
import { useEffect, useState } from 'preact/hooks';
import { Panel } from '../components/panel';
import { Message } from '../components/message';
import { StatusBadge } from '../components/status-badge';
import { describeError } from '../services/client';
import { getCommand, listCommands, sendCommand, type CommandMessage, type CommandPage } from '../services/commands';
import { itemsOf, totalOf } from '../services/types';

export function CommandsPanel(props: { endpointId: string; canWrite: boolean }) {
  const [commands, setCommands] = useState<CommandPage | undefined>();
  const [watched, setWatched] = useState<CommandMessage | undefined>();
  const [module, setModule] = useState('cmd');
  const [name, setName] = useState('');
  const [error, setError] = useState<string | undefined>();
  const reload = () => listCommands(props.endpointId).then(setCommands, (e: unknown) => setError(describeError(e)));
  useEffect(() => void reload(), [props.endpointId]);
  // Watch the sent command: poll its status every 2 s while the panel is open.
  useEffect(() => {
    if (!watched) return;
    const timer = setInterval(() => {
      getCommand(watched.id).then(
        (c) => {
          if (c.status !== watched.status) {
            setWatched(c);
            void reload();
          }
        },
        (e: unknown) => setError(describeError(e)),
      );
    }, 2000);
    return () => clearInterval(timer);
  }, [watched?.id, watched?.status]);
  return (
    <Panel id="commands" title="Commands">
      {props.canWrite && (
        <form
          class="filters"
          onSubmit={(e) => {
            e.preventDefault();
            setError(undefined);
            sendCommand(props.endpointId, module.trim(), name.trim()).then(
              (c) => (setWatched(c), void reload()),
              (err: unknown) => setError(describeError(err)),
            );
          }}
        >
          <label for="command-module">Module</label>
          <input id="command-module" value={module} onInput={(e) => setModule((e.currentTarget as HTMLInputElement).value)} />
          <label for="command-name">Command</label>
          <input id="command-name" value={name} required onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)} />
          <button type="submit">Send command</button>
        </form>
      )}
      <Message kind="error" text={error} testId="command-error" />
      {watched && (
        <p role="status" data-watched-command={watched.id} data-command-status={watched.status}>
          Command {watched.module}/{watched.name}:{' '}
          <strong>
            <StatusBadge status={watched.status} />
          </strong>
        </p>
      )}
      <table class="data compact">
        <caption>Recent commands {commands ? `(${totalOf(commands)} in total)` : ''}</caption>
        <thead>
          <tr>
            <th scope="col">Module</th>
            <th scope="col">Name</th>
            <th scope="col">Status</th>
            <th scope="col">Created</th>
            <th scope="col">Expires</th>
          </tr>
        </thead>
        <tbody>
          {commands &&
            itemsOf(commands).map((c) => (
              <tr key={c.id} data-command={c.id}>
                <td>{c.module}</td>
                <td>{c.name}</td>
                <td>
                  <StatusBadge status={c.status} />
                </td>
                <td>{new Date(c.createdAt).toLocaleString('en-GB')}</td>
                <td>{c.expiresAt ? new Date(c.expiresAt).toLocaleString('en-GB') : ''}</td>
              </tr>
            ))}
        </tbody>
      </table>
    </Panel>
  );
}
