/**
 * The software-inventory report scenarios: an unchanged report (the common one), a typical one
 * with 10 entries at a new version, and one in which every entry changed.
 *
 * Each report of an endpoint is its next visit, whichever rounds (the service's, the hop's)
 * sent the ones before, so a changing report always differs from what the endpoint has stored.
 * A report numbered by its request alone would not: the 2,000 endpoints are taken in a cycle
 * of 2,000 requests, so the same endpoint would get the same report on every pass and write
 * nothing after the first.
 */
import { aliasName } from '../src/store/client.js';
import type { EndpointDoc } from '../src/resources/endpoints/model.js';
import { holdsReport, openDigestDoc, reportDigestDoc, type InventoryDigestDoc } from '../src/resources/software-inventory/digests.js';
import {
  DEFAULT_LAST_SEEN_REFRESH_MS,
  dedupe,
  diffUnique,
  reportDigest,
  type InstalledSoftware,
  type SoftwareInventoryDoc,
} from '../src/resources/software-inventory/model.js';
import { ancestryOf, inventoryReport, seededInventory, typicalReport } from './seed.js';
import { API, type Scenario, type ScenarioContext } from './scenario.js';

/** Reports brought back to the seeded inventory at once, before the unchanged report's warm-up. */
const PREPARE_CONCURRENCY = 16;

export function inventoryScenarios(x: ScenarioContext): Scenario[] {
  const { client, seeded, root } = x;
  const orgPath = ancestryOf(seeded);
  const endpoints = aliasName(x.prefix, 'endpoints');
  const inventory = aliasName(x.prefix, 'software-inventory');
  const digests = aliasName(x.prefix, 'inventory-digests');
  const endpointOf = (i: number): number => (i * 7919) % seeded.inventoryIds.length;

  /**
   * The hop's work on one report, the store requests the service makes: the endpoint and its
   * digest (one multi-get); when the digest is not the report's, the digest withdrawn, the search
   * of the stored entries, the diff and one bulk of it (none when nothing changed), its entries
   * carrying their ancestry as the service stamps it, and the report's digest set on the
   * withdrawal's version.
   */
  async function applyDirect(id: string, reported: InstalledSoftware[], refresh: boolean): Promise<unknown> {
    const unique = dedupe(reported);
    const got = await client.mget<EndpointDoc | InventoryDigestDoc>({ docs: [{ _index: endpoints, _id: id }, { _index: digests, _id: id }] });
    const [ep, held] = got.docs.map((d) => ('_source' in d ? d._source : undefined)) as [EndpointDoc | undefined, InventoryDigestDoc | undefined];
    const orgId = ep?.orgId ?? root;
    const digest = reportDigest(orgId, unique);
    if (holdsReport(held, digest, Date.now(), DEFAULT_LAST_SEEN_REFRESH_MS)) return undefined;
    const opened = await client.index({ index: digests, id, document: openDigestDoc(id) });
    const res = await client.search<SoftwareInventoryDoc>({
      index: inventory,
      query: { term: { endpointId: id } },
      size: 10_000,
      sort: [{ id: 'asc' }],
      track_total_hits: false,
    });
    const stored = res.hits.hits.map((h) => h._source as SoftwareInventoryDoc);
    const diff = diffUnique({ id, orgId }, unique, stored, new Date());
    if (diff.upserts.length + diff.deletes.length > 0) {
      const path = orgPath(orgId);
      await client.bulk({
        index: inventory,
        refresh,
        operations: [...diff.upserts.flatMap((d) => [{ index: { _id: d.id } }, { ...d, orgPath: path }]), ...diff.deletes.map((d) => ({ delete: { _id: d } }))],
      });
    }
    const document = reportDigestDoc(id, digest, diff.lastSeenFloor);
    return client.index({ index: digests, id, document, if_seq_no: opened._seq_no, if_primary_term: opened._primary_term }, { ignore: [409] });
  }

  /** An inventory report scenario; `report(n, visit)` is inventory endpoint n's report on its visit `visit`. */
  function scenario(name: string, what: string, report: (n: number, visit: number) => InstalledSoftware[], prepare?: () => Promise<void>): Scenario {
    // The visits start at an offset of this run's, so a report does not repeat one a previous run stored.
    const visits = new Uint32Array(seeded.inventoryIds.length).fill(Date.now() % 100_000);
    const nextReport = (n: number): InstalledSoftware[] => report(n, visits[n]++);
    return {
      name,
      serviceWork:
        `POST /endpoint/{id}/software-inventory, ${what}: realtime gets of the endpoint and of its report digest; when the digest is not ` +
        "the report's: the digest withdrawn, one search of the stored entries, the diff, one bulk without refresh, one index refresh shared " +
        'with the reports that finished their bulk meanwhile (searchable before the answer), the digest set',
      directWork:
        "the same requests: one multi-get of the endpoint and its digest; when the digest is not the report's, the digest withdrawn, the " +
        'search (size 10,000, sorted by id), the bulk of the same diff (its entries carrying their ancestry) with refresh=true, the digest set',
      service: (next) => ({
        method: 'POST',
        setupRequest: (r) => {
          const n = endpointOf(next());
          return { ...r, path: `${API}/endpoint/${seeded.inventoryIds[n]}/software-inventory`, body: JSON.stringify(nextReport(n)) };
        },
      }),
      // The hop's report is the body it received, as the service's is; the direct rounds make it here.
      direct: (i, body) => applyDirect(seeded.inventoryIds[endpointOf(i)], Array.isArray(body) ? (body as InstalledSoftware[]) : nextReport(endpointOf(i)), true),
      ...(prepare ? { prepare } : {}),
    };
  }

  /** Every inventory endpoint's stored entries back to its seeded inventory (what the other scenarios changed), then one refresh. */
  async function restoreSeeded(): Promise<void> {
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let n = next++; n < seeded.inventoryIds.length; n = next++) await applyDirect(seeded.inventoryIds[n], seededInventory(n, 200), false);
    };
    await Promise.all(Array.from({ length: PREPARE_CONCURRENCY }, worker));
    await client.indices.refresh({ index: inventory });
  }

  return [
    scenario(
      'software inventory replace (200 items, unchanged)',
      "the common report: the endpoint's 200 items as it has them stored (no write; the diff finds nothing to change)",
      (n) => seededInventory(n, 200),
      restoreSeeded,
    ),
    scenario(
      'software inventory replace (200 items, 10 changed)',
      "a typical report: the endpoint's 200 items with a window of 10 moved to a new version (≈20 index + ≈20 delete against the previous report)",
      typicalReport,
    ),
    scenario(
      'software inventory replace (200 items, all changed)',
      'the worst case: 200 items none of which the endpoint had (≈200 index + ≈200 delete)',
      inventoryReport,
    ),
  ];
}
