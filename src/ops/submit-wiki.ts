import { LdsError } from "../errors.js";
import { accessDenied, callerAccess } from "../search/library-access.js";
import type { Caller, WikiJobPayload } from "../store/records.js";
import { normaliseSiteUrl } from "../store/record-values.js";
import type { OpenVolume } from "../volume/open-volume.js";
import { action } from "../hints.js";
import { privateScope } from "../util/library-id.js";

export interface WikiSubmission {
  cloudId: string;
  siteUrl: string;
  spaceKey: string;
  spaceName: string;
  title: string;
  description: string;
  projectId: string;
  pageIds?: string[];
}

/**
 * Submit a wiki space (POST /v2/add/wiki) through the team's connected wiki account. Wiki libraries are private to
 * their team, so their id is in its reserved namespace (/~team-<id>/wiki/<space>): two teams' ENG spaces never collide, and no
 * answer tells a team what another has indexed.
 */
export async function submitWikiSpace(volume: OpenVolume, caller: Caller, body: WikiSubmission): Promise<{ libraryName: string; message: string }> {
  const { store } = volume;
  if (!(await store.teams.hasProject(caller.teamId, body.projectId))) {
    throw new LdsError("team_not_found", `Project ${body.projectId} is not a project of your team.`, { hint: `An operator adds projects: ${action("team.addProject")}.` });
  }
  const connection = await store.connections.findWiki(caller.teamId, body.cloudId);
  if (!connection) {
    throw new LdsError("forbidden", `Your team has no wiki account connected for cloud ${body.cloudId}.`, { hint: `An operator connects one: ${action("connection.addWiki")}.` });
  }
  if (normaliseSiteUrl(body.siteUrl) !== connection.siteUrl) {
    throw new LdsError("validation_error", `siteUrl ${body.siteUrl} is not the site of the connected wiki account.`);
  }
  const libraryId = `/${privateScope(caller.teamId)}/wiki/${body.spaceKey.toLowerCase()}`;
  if (!(await callerAccess(store, caller)).mayUse({ id: libraryId, source: "wiki" })) throw accessDenied(libraryId);
  if (await store.libraries.find(libraryId)) {
    throw new LdsError("duplicate_repo", `The wiki space ${body.spaceKey} is already in your team (${libraryId}).`, { hint: `Refresh it: ${action("library.refresh", { libraryName: libraryId })}.` });
  }
  const origin = `confluence://${body.cloudId}/${body.spaceKey}${body.pageIds?.length ? `?pages=${body.pageIds.join(",")}` : ""}`;
  const library = {
    id: libraryId,
    teamId: caller.teamId,
    title: body.title,
    description: body.description,
    source: "wiki" as const,
    sourceUrl: origin,
    sourceKey: origin.toLowerCase(),
    private: true,
    ownerUserId: caller.userId,
  };
  await store.libraries.createWithJob(library, null, wikiPayloadOf(origin, caller.teamId));
  return { libraryName: libraryId, message: `Wiki space ${body.spaceKey} was submitted for processing.` };
}

/** Wiki libraries keep their origin as confluence://<cloudId>/<spaceKey>[?pages=1,2]. */
export function wikiPayloadOf(sourceUrl: string, teamId: number): WikiJobPayload {
  const url = new URL(sourceUrl);
  const pages = url.searchParams.get("pages");
  return { source: "wiki", teamId, cloudId: url.host, spaceKey: url.pathname.slice(1), pageIds: pages ? pages.split(",") : undefined };
}
