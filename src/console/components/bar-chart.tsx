/**
 * A bar chart (Chart.js on a canvas: no inline styles or scripts, so it works under the CSP)
 * with the same figures as a table beside it: readable by screen readers, and by the browser
 * tests through data-key / data-count.
 */
import { useEffect, useRef } from 'preact/hooks';
import { BarController, BarElement, CategoryScale, Chart, LinearScale, Tooltip } from 'chart.js';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip);

export interface Bucket {
  key: string;
  count: number;
}

export function BarChart(props: { id: string; title: string; buckets: Bucket[] | undefined; note?: string; unit?: string; onDrawn?: () => void; warn?: (key: string) => boolean }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const { buckets, onDrawn } = props;
  useEffect(() => {
    if (!canvas.current || !buckets) return;
    const chart = new Chart(canvas.current, {
      type: 'bar',
      data: { labels: buckets.map((b) => b.key), datasets: [{ label: props.title, data: buckets.map((b) => b.count), backgroundColor: buckets.map((b) => (props.warn?.(b.key) ? '#b35c00' : '#2f6db5')) }] },
      options: { animation: false, responsive: true, maintainAspectRatio: false, plugins: { legend: { display: false } }, scales: { y: { beginAtZero: true } } },
    });
    onDrawn?.();
    return () => chart.destroy();
  }, [buckets]);
  const total = buckets?.reduce((s, b) => s + b.count, 0);
  return (
    <figure class="chart" data-chart={props.id} data-ready={buckets ? 'true' : 'false'} aria-busy={buckets ? 'false' : 'true'}>
      <figcaption>
        <h3>{props.title}</h3>
        {props.note && <p class="note">{props.note}</p>}
      </figcaption>
      <div class="canvas-box">
        <canvas ref={canvas} role="img" aria-label={`${props.title}: ${buckets?.map((b) => `${b.key} ${b.count}`).join(', ') ?? 'loading'}`} />
      </div>
      {buckets ? (
        <table class="figures">
          <caption class="visually-hidden">{props.title}</caption>
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">{props.unit ?? 'Count'}</th>
            </tr>
          </thead>
          <tbody>
            {buckets.map((b) => (
              <tr key={b.key} data-key={b.key} data-count={String(b.count)} class={props.warn?.(b.key) ? 'warn' : undefined}>
                <td>{b.key}</td>
                <td class="num">{b.count.toLocaleString('en-US')}</td>
              </tr>
            ))}
          </tbody>
          <tfoot>
            <tr>
              <th scope="row">Total</th>
              <td class="num" data-total={String(total)}>
                {total?.toLocaleString('en-US')}
              </td>
            </tr>
          </tfoot>
        </table>
      ) : (
        <p class="loading">Loading…</p>
      )}
    </figure>
  );
}
