/** NDJSON and CSV downloads of a table's current search (its `/export` sibling). */
import { useState } from 'preact/hooks';
import { describeError } from '../services/client';
import { exportBlob, saveBlob, type ExportFormat } from '../services/export';
import { Message } from './message';

export function ExportButtons(props: { id: string; search: () => Parameters<typeof exportBlob>[0] }) {
  const [busy, setBusy] = useState<ExportFormat | undefined>();
  const [error, setError] = useState<string | undefined>();
  const run = (format: ExportFormat) => {
    setBusy(format);
    setError(undefined);
    const search = props.search();
    exportBlob(search, format).then(
      (blob) => {
        saveBlob(blob, `${props.id}-${new Date().toISOString().replace(/[:.]/g, '-')}.${format}`);
        setBusy(undefined);
      },
      (e: unknown) => (setBusy(undefined), setError(describeError(e))),
    );
  };
  return (
    <div class="export" data-export={props.id}>
      <span>Export every match:</span>
      <button type="button" data-export-format="ndjson" disabled={busy !== undefined} onClick={() => run('ndjson')}>
        {busy === 'ndjson' ? 'Exporting…' : 'NDJSON'}
      </button>
      <button type="button" data-export-format="csv" disabled={busy !== undefined} onClick={() => run('csv')}>
        {busy === 'csv' ? 'Exporting…' : 'CSV'}
      </button>
      <Message kind="error" text={error} />
    </div>
  );
}
