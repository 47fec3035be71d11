/**
 * Fleet overview of the scope: every figure is one count or aggregation answer of the API
 * (never a page of records summed in the browser), so it holds at 100k endpoints.
 */
import { useEffect, useState } from 'preact/hooks';
import { BarChart, type Bucket } from '../components/bar-chart';
import { Message } from '../components/message';
import { describeError } from '../services/client';
import { lteDataUsageSum, searchAgents, searchLte, searchUtm, statusesByFamily, utmModels } from '../services/endpoints';
import { countLicenses, LICENSE_STATES } from '../services/licenses';
import { agentsByOs } from '../services/reports';
import { narrowedToOneOrg, type Scope } from '../services/scope';
import { softwareSummary } from '../services/software';
import { itemsOf, totalOf } from '../services/types';

interface Figures {
  byType: Bucket[];
  byTypeAndStatus: Bucket[];
  agentsByOs: Bucket[];
  utmByModel: Bucket[];
  lteUsage: Bucket[];
  licensesByState: Bucket[];
  topSoftware: Bucket[];
}

async function loadFigures(scope: Scope): Promise<Figures> {
  const one = { page: 0, size: 1 };
  const [agents, utm, lte, statuses, os, models, usage, licenses, software] = await Promise.all([
    searchAgents(scope, { showInactive: true }, one),
    searchUtm(scope, [], one),
    searchLte(scope, one),
    statusesByFamily(scope),
    agentsByOs(scope),
    utmModels(scope),
    lteDataUsageSum(),
    Promise.all(LICENSE_STATES.map(async (s) => ({ key: s, count: await countLicenses(scope, s) }))),
    softwareSummary(scope.orgId, undefined, 0, 10, { field: 'count', direction: 'DESC' }),
  ]);
  return {
    byType: [
      { key: 'agents (VC_ENDPOINT)', count: totalOf(agents) },
      { key: 'UTM', count: totalOf(utm) },
      { key: 'LTE (VC_LTE)', count: totalOf(lte) },
    ],
    byTypeAndStatus: statuses.map((b) => ({ key: `${b.family} ${b.connectionStatus}`, count: b.count })),
    agentsByOs: os.map((b) => ({ key: b.key, count: b.count })),
    utmByModel: models.map((b) => ({ key: b.key, count: b.count })),
    lteUsage: [{ key: 'dataUsage', count: usage }],
    licensesByState: licenses,
    topSoftware: itemsOf(software).map((s) => ({ key: `${s.name} ${s.version}`, count: s.count })),
  };
}

export function OverviewPage(props: { scope: Scope }) {
  const { scope } = props;
  const [figures, setFigures] = useState<Figures | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [renderMs, setRenderMs] = useState<number | undefined>();
  const [started, setStarted] = useState(0);

  useEffect(() => {
    let live = true;
    const t0 = performance.now();
    setStarted(t0);
    setFigures(undefined);
    setRenderMs(undefined);
    setError(undefined);
    loadFigures(scope).then(
      (f) => live && setFigures(f),
      (e: unknown) => live && setError(describeError(e)),
    );
    return () => {
      live = false;
    };
  }, [scope.orgId, scope.includeChildren]);

  useEffect(() => {
    // After the charts' own effects have drawn: the time from asking to a complete overview.
    if (!figures) return;
    // The bench (bench/console.ts) reads this mark: ms since navigation start to the drawn charts.
    performance.mark('overview-drawn');
    setRenderMs(Math.round(performance.now() - started));
  }, [figures]);

  const narrowed = narrowedToOneOrg(scope);
  return (
    <section id="overview" aria-labelledby="overview-title" data-render-ms={renderMs === undefined ? '' : String(renderMs)}>
      <h2 id="overview-title" tabIndex={-1}>
        Fleet overview
      </h2>
      <Message kind="error" text={error} testId="overview-error" />
      {renderMs !== undefined && <p class="note">Loaded in {renderMs} ms.</p>}
      <div class="charts">
        <BarChart id="endpoints-by-type" title="Endpoints by type" buckets={figures?.byType} note={narrowed ? 'Agents: the selected organization only (agent search takes one organization).' : undefined} />
        <BarChart
          id="endpoints-by-status"
          title="Agents and UTM endpoints by connection status"
          buckets={figures?.byTypeAndStatus}
          warn={(key) => key.endsWith('POTENTIALLY_DISCONNECTED')}
          note={`POTENTIALLY_DISCONNECTED: connected, but not seen within the presence timeout. LTE endpoints have no status count.${narrowed ? ' Agents: the selected organization only.' : ''}`}
        />
        <BarChart id="agents-by-os" title="Agents by OS" buckets={figures?.agentsByOs} />
        <BarChart id="utm-by-model" title="UTM endpoints by model" buckets={figures?.utmByModel} />
        <BarChart id="lte-data-usage" title="LTE data usage" unit="Bytes" buckets={figures?.lteUsage} note="Over every LTE endpoint your token sees (the API sums the whole subtree)." />
        <BarChart id="licenses-by-state" title="Licenses by state" buckets={figures?.licensesByState} note={narrowed ? 'The selected organization only (license counts take one organization).' : undefined} />
        <BarChart id="top-software" title="Top software titles (hosts)" buckets={figures?.topSoftware} />
      </div>
    </section>
  );
}
