import type { ConnectionListing } from "./records.js";

/** A row of `connections` as both engines store it (the same columns): `hosts` is JSON text. */
export interface ConnectionRow {
  id: number;
  team_id: number;
  kind: "git" | "wiki";
  hosts: string | null;
  cloud_id: string | null;
  site_url: string | null;
  api_base: string | null;
  grant_id: number | null;
  created_at: string;
}

/** The columns a ConnectionRow is read from. */
export const CONNECTION_COLUMNS = "id, team_id, kind, hosts, cloud_id, site_url, api_base, grant_id, created_at";

/** A row as the listing the contract hands over, never a token (tokens are sealed in secrets, not here). */
export function toConnectionListing(r: ConnectionRow): ConnectionListing {
  return {
    id: r.id,
    teamId: r.team_id,
    kind: r.kind,
    hosts: r.hosts ? (JSON.parse(r.hosts) as string[]) : [],
    cloudId: r.cloud_id,
    siteUrl: r.site_url,
    apiBase: r.api_base,
    grantId: r.grant_id,
    createdAt: r.created_at,
  };
}
