-- Device records copied out of Elasticsearch (spec 4.4): one table per family.
-- Scalar fields are columns; nested values that are read whole (site with its address,
-- hostInfo, the UserKeys, the WAN interface states) are JSONB. site_id is also a column so
-- "devices of a site" is an index lookup. source_version is the Elasticsearch _version the
-- row mirrors (after the MIGRATED_TO_SQL mark): a later run skips a record whose _version
-- still equals it.

CREATE TABLE utm_devices (
  id                            text PRIMARY KEY,
  org_id                        text NOT NULL,
  type                          text NOT NULL,
  client_version                text,
  cert_subject                  text,
  display_name                  text,
  host_info                     jsonb,
  last_connect                  timestamptz,
  last_disconnect               timestamptz,
  cert_expiry                   timestamptz,
  last_ip                       text,
  fim_hoh                       text,
  pan_hoh                       text,
  latest_config                 boolean,
  internal_ips                  text[],
  connection_status             text,
  external_status               text,
  serial_id                     text,
  site_id                       text,
  last_mac_address              text,
  last_event_update_ts          timestamptz,
  last_security_event_update_ts timestamptz,
  meraki_network_id             text,
  model                         text,
  common_name                   text,
  manufacturer                  text,
  latitude                      double precision,
  longitude                     double precision,
  wan_status                    text,
  interfaces                    jsonb,
  site                          jsonb,
  created_at                    timestamptz,
  updated_at                    timestamptz,
  created_by                    jsonb,
  updated_by                    jsonb,
  source_version                bigint NOT NULL,
  migrated_at                   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX utm_devices_org_id ON utm_devices (org_id);
CREATE INDEX utm_devices_serial_id ON utm_devices (serial_id);
CREATE INDEX utm_devices_site_id ON utm_devices (site_id);

CREATE TABLE lte_devices (
  id                text PRIMARY KEY,
  org_id            text NOT NULL,
  type              text NOT NULL,
  client_version    text,
  cert_subject      text,
  display_name      text,
  host_info         jsonb,
  last_connect      timestamptz,
  last_disconnect   timestamptz,
  cert_expiry       timestamptz,
  last_ip           text,
  fim_hoh           text,
  pan_hoh           text,
  latest_config     boolean,
  internal_ips      text[],
  connection_status text,
  external_status   text,
  data_usage        double precision,
  data_allowance    bigint,
  iccid             text,
  imei              text,
  model             text,
  mtn               text,
  telco             text,
  pool_org_id       text,
  site_id           text,
  site              jsonb,
  created_at        timestamptz,
  updated_at        timestamptz,
  created_by        jsonb,
  updated_by        jsonb,
  source_version    bigint NOT NULL,
  migrated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX lte_devices_org_id ON lte_devices (org_id);
CREATE INDEX lte_devices_imei ON lte_devices (imei);
CREATE INDEX lte_devices_site_id ON lte_devices (site_id);
