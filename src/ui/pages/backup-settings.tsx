import { Cron } from "croner";
import { useEffect, useMemo, useState } from "preact/hooks";
import { api } from "../api.js";
import { ErrorMessage } from "../components/error-message.js";
import { Field } from "../components/field.js";
import { dateTime, duration } from "../format.js";
import type { BackupConfig as Config, DestinationTest } from "../../server/api-types.js";
import { DestinationFields } from "./destination-fields.js";

const PRESETS: Array<{ value: Config["schedule"]["preset"]; label: string; cron: string | null }> = [
  { value: "daily", label: "Daily at 03:00", cron: "0 3 * * *" },
  { value: "every-6-hours", label: "Every 6 hours", cron: "0 */6 * * *" },
  { value: "weekly", label: "Weekly (Sunday 03:00)", cron: "0 3 * * 0" },
  { value: "custom", label: "Custom (cron)", cron: null },
  { value: "off", label: "Off", cron: null },
];

/** The next three runs of a schedule, computed in the page as the operator types (the server uses the same library). */
function nextRuns(expression: string | null, timezone: string): { runs: Date[]; problem: string | null } {
  if (!expression) return { runs: [], problem: null };
  try {
    return { runs: new Cron(expression, { timezone, paused: true }).nextRuns(3), problem: null };
  } catch (err) {
    return { runs: [], problem: (err as Error).message };
  }
}

/** Destination, schedule, retention and compression, saved together; Test connection tries the form as it stands. */
export function BackupSettings({ onSaved }: { onSaved: () => void }) {
  const [config, setConfig] = useState<Config>();
  const [loadError, setLoadError] = useState<unknown>();
  const [saveError, setSaveError] = useState<unknown>();
  const [saved, setSaved] = useState(false);
  const [testing, setTesting] = useState<"idle" | "running" | DestinationTest | { error: unknown }>("idle");
  const timezones = useMemo(() => (Intl as unknown as { supportedValuesOf?: (k: string) => string[] }).supportedValuesOf?.("timeZone") ?? ["UTC"], []);
  useEffect(() => {
    api<Config>("GET", "/api/backup/config").then(setConfig, setLoadError);
  }, []);
  if (loadError) return <ErrorMessage error={loadError} />;
  // As tall as the form it stands for, so that the page does not jump when the configuration arrives.
  if (!config) return <p class="loading settings-placeholder">Loading the configuration…</p>;

  const update = (change: Partial<Config>) => {
    setConfig({ ...config, ...change });
    setSaved(false);
  };
  const preset = PRESETS.find((p) => p.value === config.schedule.preset)!;
  const expression = config.schedule.preset === "custom" ? config.schedule.cron : preset.cron;
  const preview = nextRuns(expression, config.schedule.timezone);

  return (
    <form
      class="settings"
      onSubmit={async (e) => {
        e.preventDefault();
        setSaveError(undefined);
        try {
          setConfig(await api<Config>("PUT", "/api/backup/config", config));
          setSaved(true);
          onSaved();
        } catch (err) {
          setSaveError(err);
        }
      }}
    >
      <fieldset>
        <legend>Destination</legend>
        <DestinationFields destination={config.destination} onChange={(destination) => (update({ destination }), setTesting("idle"))} />
        <div class="actions">
          <button
            type="button"
            disabled={testing === "running"}
            onClick={async () => {
              setTesting("running");
              try {
                setTesting(await api<DestinationTest>("POST", "/api/backup/test-connection", { destination: config.destination }));
              } catch (error) {
                setTesting({ error });
              }
            }}
          >
            {testing === "running" ? "Testing…" : "Test connection"}
          </button>
        </div>
        <div aria-live="polite">
          {typeof testing === "object" && "ok" in testing && (
            <p class="success" data-testid="connection-ok">
              Connection works: wrote, read back and deleted a probe at {testing.destination} in {duration(testing.durationMs)}.
            </p>
          )}
          {typeof testing === "object" && "error" in testing && <ErrorMessage error={testing.error} />}
        </div>
      </fieldset>

      <fieldset>
        <legend>Schedule</legend>
        <Field id="schedule-preset" label="When">
          <select id="schedule-preset" value={config.schedule.preset} onChange={(e) => update({ schedule: { ...config.schedule, preset: e.currentTarget.value as Config["schedule"]["preset"] } })}>
            {PRESETS.map((p) => (
              <option key={p.value} value={p.value}>
                {p.label}
              </option>
            ))}
          </select>
        </Field>
        {config.schedule.preset === "custom" && (
          <Field id="schedule-cron" label="Cron expression" help="Five fields: minute hour day-of-month month day-of-week, e.g. 30 2 * * 1-5.">
            <input
              id="schedule-cron"
              aria-describedby="schedule-cron-help"
              spellcheck={false}
              value={config.schedule.cron ?? ""}
              onInput={(e) => update({ schedule: { ...config.schedule, cron: e.currentTarget.value } })}
            />
          </Field>
        )}
        <Field id="schedule-timezone" label="Timezone">
          <input id="schedule-timezone" list="timezones" value={config.schedule.timezone} onInput={(e) => update({ schedule: { ...config.schedule, timezone: e.currentTarget.value } })} />
          <datalist id="timezones">
            {timezones.map((tz) => (
              <option key={tz} value={tz} />
            ))}
          </datalist>
        </Field>
        <div class="next-runs" aria-live="polite" data-testid="next-runs">
          {preview.problem && <p class="invalid">Not a valid schedule: {preview.problem}</p>}
          {preview.runs.length > 0 && (
            <>
              <p>Next runs:</p>
              <ol>
                {preview.runs.map((run) => (
                  <li key={run.toISOString()}>{dateTime(run.toISOString())}</li>
                ))}
              </ol>
            </>
          )}
          {config.schedule.preset === "off" && <p>No scheduled backups: only Back up now, the API and cron.</p>}
        </div>
      </fieldset>

      <fieldset>
        <legend>Retention and format</legend>
        <div class="radios" role="radiogroup" aria-label="Retention">
          <label>
            <input type="radio" name="retention" checked={config.retention.keep === null} onChange={() => update({ retention: { keep: null } })} /> Keep every archive
          </label>
          <label>
            <input type="radio" name="retention" checked={config.retention.keep !== null} onChange={() => update({ retention: { keep: config.retention.keep ?? 14 } })} /> Keep the newest
          </label>
        </div>
        {config.retention.keep !== null && (
          <Field id="retention-keep" label="Archives to keep">
            <input id="retention-keep" type="number" min={1} max={100000} value={config.retention.keep} onInput={(e) => update({ retention: { keep: Number(e.currentTarget.value) || 1 } })} />
          </Field>
        )}
        <Field id="compression" label="Compression">
          <select id="compression" value={config.compression} onChange={(e) => update({ compression: e.currentTarget.value as Config["compression"] })}>
            <option value="none">None (fastest; a plain tar)</option>
            <option value="gzip">gzip (smaller, slower)</option>
          </select>
        </Field>
        <Field id="recipients" label="Encrypt to age recipients (one public key per line)" help="Empty: archives are not encrypted and hold the data volume's key in clear.">
          <textarea
            id="recipients"
            rows={2}
            spellcheck={false}
            aria-describedby="recipients-help"
            value={config.encryption.recipients.join("\n")}
            onInput={(e) =>
              update({
                encryption: {
                  recipients: e.currentTarget.value
                    .split("\n")
                    .map((l) => l.trim())
                    .filter(Boolean),
                },
              })
            }
          />
        </Field>
        <Field id="drill" label="Restore drill">
          <select id="drill" value={config.drill.schedule} onChange={(e) => update({ drill: { schedule: e.currentTarget.value as Config["drill"]["schedule"] } })}>
            <option value="off">Off</option>
            <option value="after-backup">After every backup</option>
            <option value="daily">Daily, of the newest archive</option>
          </select>
        </Field>
      </fieldset>
      <ErrorMessage error={saveError} />
      <div class="actions">
        <button type="submit" class="primary">
          Save settings
        </button>
        <span aria-live="polite">{saved && <span class="success">Saved.</span>}</span>
      </div>
    </form>
  );
}
