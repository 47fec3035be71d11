/**
 * Endpoint documents → rows of the device tables (sql/001_devices.sql): the column list of
 * each family, the COPY text-format encoding of one row, and the upsert from the staging
 * table. The column lists here and the tables in the SQL files must agree (the migration
 * tests read every column back).
 */
import { LTE_TYPES, UTM_TYPES, type EndpointDoc, type EndpointType } from '../resources/endpoints/model.js';

export type DeviceFamily = 'utm' | 'lte';
export const DEVICE_FAMILIES: readonly DeviceFamily[] = ['utm', 'lte'];

export const MIGRATED_TO_SQL = 'MIGRATED_TO_SQL';

type Kind = 'text' | 'timestamptz' | 'jsonb' | 'boolean' | 'double' | 'bigint' | 'text[]';

export interface Column {
  name: string;
  kind: Kind;
  value(d: EndpointDoc): unknown;
}

export interface FamilyTable {
  family: DeviceFamily;
  table: string;
  types: readonly EndpointType[];
  /** Every column copied from a document, `id` first; `source_version` and `migrated_at` follow. */
  columns: readonly Column[];
}

const col = (name: string, kind: Kind, value: (d: EndpointDoc) => unknown): Column => ({ name, kind, value });

const COMMON: Column[] = [
  col('id', 'text', (d) => d.id),
  col('org_id', 'text', (d) => d.orgId),
  col('type', 'text', (d) => d.type),
  col('client_version', 'text', (d) => d.clientVersion),
  col('cert_subject', 'text', (d) => d.certSubject),
  col('display_name', 'text', (d) => d.displayName),
  col('host_info', 'jsonb', (d) => d.hostInfo),
  col('last_connect', 'timestamptz', (d) => d.lastConnect),
  col('last_disconnect', 'timestamptz', (d) => d.lastDisconnect),
  col('cert_expiry', 'timestamptz', (d) => d.certExpiry),
  col('last_ip', 'text', (d) => d.lastIp),
  col('fim_hoh', 'text', (d) => d.fimHoh),
  col('pan_hoh', 'text', (d) => d.panHoh),
  col('latest_config', 'boolean', (d) => d.latestConfig),
  col('internal_ips', 'text[]', (d) => d.internalIps),
  col('connection_status', 'text', (d) => d.connectionStatus),
  col('external_status', 'text', (d) => d.externalStatus),
];

const AUDIT: Column[] = [
  col('created_at', 'timestamptz', (d) => d.createdAt),
  col('updated_at', 'timestamptz', (d) => d.updatedAt),
  col('created_by', 'jsonb', (d) => d.createdBy),
  col('updated_by', 'jsonb', (d) => d.updatedBy),
];

export const FAMILY_TABLES: Record<DeviceFamily, FamilyTable> = {
  utm: {
    family: 'utm',
    table: 'utm_devices',
    types: UTM_TYPES,
    columns: [
      ...COMMON,
      col('serial_id', 'text', (d) => d.serialId),
      col('site_id', 'text', (d) => d.siteId ?? d.site?.id),
      col('last_mac_address', 'text', (d) => d.lastMacAddress),
      col('last_event_update_ts', 'timestamptz', (d) => d.lastEventUpdateTs),
      col('last_security_event_update_ts', 'timestamptz', (d) => d.lastSecurityEventUpdateTs),
      col('meraki_network_id', 'text', (d) => d.merakiNetworkId),
      col('model', 'text', (d) => d.model),
      col('common_name', 'text', (d) => d.commonName),
      col('manufacturer', 'text', (d) => d.manufacturer),
      col('latitude', 'double', (d) => d.latitude),
      col('longitude', 'double', (d) => d.longitude),
      col('wan_status', 'text', (d) => d.wanStatus),
      col('interfaces', 'jsonb', (d) => d.interfaces),
      col('site', 'jsonb', (d) => d.site),
      ...AUDIT,
    ],
  },
  lte: {
    family: 'lte',
    table: 'lte_devices',
    types: LTE_TYPES,
    columns: [
      ...COMMON,
      col('data_usage', 'double', (d) => d.dataUsage),
      col('data_allowance', 'bigint', (d) => d.dataAllowance),
      col('iccid', 'text', (d) => d.iccid),
      col('imei', 'text', (d) => d.imei),
      col('model', 'text', (d) => d.model),
      col('mtn', 'text', (d) => d.mtn),
      col('telco', 'text', (d) => d.telco),
      col('pool_org_id', 'text', (d) => d.poolOrgId),
      col('site_id', 'text', (d) => d.site?.id ?? d.siteId),
      col('site', 'jsonb', (d) => d.site),
      ...AUDIT,
    ],
  },
};

/**
 * PostgreSQL text and jsonb cannot hold U+0000, which Elasticsearch stores happily: one such
 * record failed every later migration. It becomes U+FFFD (the replacement character).
 */
function pgText(s: string): string {
  return s.includes('\u0000') ? s.split('\u0000').join('\uFFFD') : s;
}

/** Escapes one value for COPY's text format (backslash, tab, newline, carriage return). */
function escapeCopy(s: string): string {
  return pgText(s).replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'));
}

/** A PostgreSQL array literal of strings. */
function arrayLiteral(items: unknown[]): string {
  return `{${items.map((i) => `"${String(i).replace(/[\\"]/g, (c) => `\\${c}`)}"`).join(',')}}`;
}

/** Elasticsearch dates are ISO strings or epoch milliseconds; PostgreSQL wants ISO. */
function timestamp(v: unknown): string {
  if (typeof v === 'number' || (typeof v === 'string' && /^\d{1,15}$/.test(v))) return new Date(Number(v)).toISOString();
  return String(v);
}

function encode(kind: Kind, v: unknown): string {
  if (v === undefined || v === null) return '\\N';
  switch (kind) {
    case 'jsonb':
      // In JSON text U+0000 is the escape `\u0000`, which jsonb refuses too: replaced inside the strings.
      return escapeCopy(JSON.stringify(v, (_key, value: unknown) => (typeof value === 'string' ? pgText(value) : value)));
    case 'boolean':
      return v ? 't' : 'f';
    case 'double':
    case 'bigint':
      return typeof v === 'number' && Number.isFinite(v) ? String(kind === 'bigint' ? Math.trunc(v) : v) : '\\N';
    case 'timestamptz':
      return escapeCopy(timestamp(v));
    case 'text[]':
      return escapeCopy(arrayLiteral(Array.isArray(v) ? v : [v]));
    default:
      return escapeCopy(String(v));
  }
}

/** One COPY text-format line for a document and the source version its row records. */
export function copyLine(t: FamilyTable, doc: EndpointDoc, sourceVersion: number): string {
  return `${t.columns.map((c) => encode(c.kind, c.value(doc))).join('\t')}\t${sourceVersion}\n`;
}

/** Columns COPY writes into the staging table. */
export function copyColumns(t: FamilyTable): string[] {
  return [...t.columns.map((c) => c.name), 'source_version'];
}

/**
 * Staging → table. A row already present is replaced, except that the device's own
 * external status is kept when the document only carries the MIGRATED_TO_SQL mark (a record
 * re-copied after a change has lost its original status in Elasticsearch).
 */
export function upsertSql(t: FamilyTable, staging: string): string {
  const cols = copyColumns(t);
  const updates = cols
    .filter((c) => c !== 'id')
    .map((c) =>
      c === 'external_status'
        ? `external_status = CASE WHEN EXCLUDED.external_status = '${MIGRATED_TO_SQL}' AND ${t.table}.external_status IS NOT NULL THEN ${t.table}.external_status ELSE EXCLUDED.external_status END`
        : `${c} = EXCLUDED.${c}`,
    );
  return (
    `INSERT INTO ${t.table} (${cols.join(', ')}, migrated_at) SELECT ${cols.join(', ')}, now() FROM ${staging} ` +
    `ON CONFLICT (id) DO UPDATE SET ${[...updates, 'migrated_at = now()'].join(', ')}`
  );
}
