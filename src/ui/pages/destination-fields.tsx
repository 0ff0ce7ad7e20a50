import { Field } from "../components/field.js";
import { SecretField } from "../components/secret-field.js";
import type { DestinationConfig as Destination } from "../../server/api-types.js";

const text = (value: unknown) => (typeof value === "string" ? value : "");

/**
 * The destination part of the form. The S3 secret is write-only (SecretField): cleared, S3 falls back to the
 * default AWS credential chain.
 */
export function DestinationFields({ destination, onChange }: { destination: Destination; onChange: (d: Destination) => void }) {
  const set = (field: string, value: unknown) => onChange({ ...destination, [field]: value });
  const switchTo = (type: string) => onChange(type === "s3" ? { type, bucket: "", region: "us-east-1", endpoint: null, forcePathStyle: false, prefix: "", accessKeyId: null } : { type, path: null });
  return (
    <>
      <div class="radios" role="radiogroup" aria-label="Destination type">
        <label>
          <input type="radio" name="destination-type" value="local" checked={destination.type === "local"} onChange={() => switchTo("local")} /> Local or network directory
        </label>
        <label>
          <input type="radio" name="destination-type" value="s3" checked={destination.type === "s3"} onChange={() => switchTo("s3")} /> S3 or S3-compatible
        </label>
      </div>
      {destination.type === "local" && (
        <Field id="local-path" label="Directory (absolute path)" help="Empty: the backups folder inside the data directory.">
          <input id="local-path" aria-describedby="local-path-help" spellcheck={false} value={text(destination.path)} onInput={(e) => set("path", e.currentTarget.value || null)} />
        </Field>
      )}
      {destination.type === "s3" && (
        <div class="grid">
          <Field id="s3-bucket" label="Bucket">
            <input id="s3-bucket" required spellcheck={false} value={text(destination.bucket)} onInput={(e) => set("bucket", e.currentTarget.value)} />
          </Field>
          <Field id="s3-region" label="Region">
            <input id="s3-region" spellcheck={false} value={text(destination.region) || "us-east-1"} onInput={(e) => set("region", e.currentTarget.value || "us-east-1")} />
          </Field>
          <Field id="s3-endpoint" label="Endpoint (S3-compatible stores)" help="Empty: AWS.">
            <input id="s3-endpoint" type="url" aria-describedby="s3-endpoint-help" spellcheck={false} value={text(destination.endpoint)} onInput={(e) => set("endpoint", e.currentTarget.value || null)} />
          </Field>
          <Field id="s3-prefix" label="Key prefix">
            <input id="s3-prefix" spellcheck={false} value={text(destination.prefix)} onInput={(e) => set("prefix", e.currentTarget.value)} />
          </Field>
          <Field id="s3-access-key-id" label="Access key id" help="Empty: the AWS default credential chain (instance role, environment).">
            <input
              id="s3-access-key-id"
              aria-describedby="s3-access-key-id-help"
              autocomplete="off"
              spellcheck={false}
              value={text(destination.accessKeyId)}
              onInput={(e) => set("accessKeyId", e.currentTarget.value || null)}
            />
          </Field>
          <SecretField
            id="s3-secret"
            label="Secret access key"
            isSet={destination.secretAccessKeySet === true}
            value={typeof destination.secretAccessKey === "string" ? destination.secretAccessKey : undefined}
            onChange={(value) => set("secretAccessKey", value)}
          />
          <label class="check">
            <input type="checkbox" checked={destination.forcePathStyle === true} onChange={(e) => set("forcePathStyle", e.currentTarget.checked)} /> Path-style addressing (most self-hosted stores)
          </label>
        </div>
      )}
    </>
  );
}
