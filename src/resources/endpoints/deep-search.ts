/**
 * The endpoint families' page searches prepared for cursors and exports (issue 16,
 * src/http/deep-paging.ts): the same query (the caller's organizations resolved again on every
 * call), the same sort with the id tiebreaker, the same hit-to-record mapping as the pages.
 */
import type { Access } from '../../http/auth.js';
import { pageQuery, type PageRequest } from '../../http/paging.js';
import type { Query, Stored } from '../../store/doc-store.js';
import { PitSearch } from '../../store/scan.js';
import type { EndpointCriteria, LteEndpointCriteria, UtmCriteria } from './criteria.js';
import { endpointCriteriaQuery, lteCriteriaQuery, utmCriteriaQuery } from './criteria.js';
import type { EndpointDoc, EndpointRecord } from './model.js';
import { ENDPOINT_SORT, LTE_SORT, UTM_SORT } from './schema.js';
import type { EndpointService } from './service.js';
import { hitToEndpointRecord } from './store.js';

function prepared(
  svc: EndpointService,
  query: Query,
  pr: PageRequest,
  sort: Record<string, string>,
): PitSearch<EndpointDoc, EndpointRecord> {
  // Page 0: only the sort is wanted here (a cursor's depth is checked by the paging layer).
  // Presence (issue 16) is applied to each record as the page search's store reads do.
  const presence = svc.store.presence;
  const toRecord = presence ? (hit: Stored<EndpointDoc>) => presence.apply(hitToEndpointRecord(hit)) : hitToEndpointRecord;
  return new PitSearch(svc.store.docs, query, pageQuery({ ...pr, page: 0 }, sort).sort, toRecord);
}

/** POST /endpoint/page-search, deep. */
export async function deepAgents(
  svc: EndpointService,
  c: EndpointCriteria,
  pr: PageRequest,
  access: Access,
): Promise<PitSearch<EndpointDoc, EndpointRecord>> {
  const view = await svc.store.presence?.view();
  return prepared(svc, endpointCriteriaQuery(c, await access.resolveOrgs(c.orgId, false), view?.nowMs ?? Date.now(), view), pr, ENDPOINT_SORT);
}

/** POST /utm-endpoint/searchPage, deep. */
export async function deepUtm(
  svc: EndpointService,
  c: UtmCriteria,
  pr: PageRequest,
  access: Access,
): Promise<PitSearch<EndpointDoc, EndpointRecord>> {
  return prepared(
    svc,
    utmCriteriaQuery(c, await access.resolveOrgs(c.orgId, c.includeChildren ?? false), await svc.store.presence?.view()),
    pr,
    UTM_SORT,
  );
}

/** POST /lte-endpoint/search, deep. */
export async function deepLte(
  svc: EndpointService,
  c: LteEndpointCriteria,
  pr: PageRequest,
  access: Access,
): Promise<PitSearch<EndpointDoc, EndpointRecord>> {
  return prepared(
    svc,
    lteCriteriaQuery(c, await access.resolveOrgs(c.orgId, c.includeChildren ?? false)),
    pr,
    LTE_SORT,
  );
}
