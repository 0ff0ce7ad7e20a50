import { LdsError } from "../errors.js";
import { setting } from "../hints.js";

export interface S3ErrorContext {
  bucket: string;
  region: string;
  endpoint?: string;
  /** What we were doing, e.g. "uploading lds-backup-….tar". */
  action: string;
}

/**
 * Turn an AWS SDK or network error into one line that names the setting to check. The SDK's messages can hold
 * request ids and signatures but never our secret; still, only its error name and code are used here.
 */
export function s3Error(err: unknown, ctx: S3ErrorContext): LdsError {
  if (err instanceof LdsError) return err;
  const e = err as { name?: string; Code?: string; code?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const name = e?.name ?? e?.Code ?? "";
  const status = e?.$metadata?.httpStatusCode;
  const where = `s3://${ctx.bucket}${ctx.endpoint ? ` at ${ctx.endpoint}` : ""}`;
  const netCode = e?.code ?? (e as { cause?: { code?: string } })?.cause?.code;

  if (name === "NoSuchBucket") {
    return new LdsError("bucket_not_found", `The bucket "${ctx.bucket}" does not exist${ctx.endpoint ? ` at ${ctx.endpoint}` : ""} (while ${ctx.action}).`, {
      hint: `Check the bucket name (${setting("s3.bucket")}) or create the bucket.`,
    });
  }
  if (name === "CredentialsProviderError") {
    return new LdsError("destination_auth_failed", `No S3 credentials were found for ${where} (while ${ctx.action}): none were given, and the default AWS credential chain found none.`, {
      hint: `Give an access key id and secret (${setting("s3.accessKeyId")}, ${setting("s3.secretAccessKey")}), or run where the AWS chain finds some (instance role, AWS_PROFILE).`,
    });
  }
  if (name === "InvalidAccessKeyId" || name === "SignatureDoesNotMatch" || name === "InvalidClientTokenId" || name === "ExpiredToken") {
    return new LdsError("destination_auth_failed", `${where} rejected the credentials (${name}) while ${ctx.action}.`, {
      hint: `Check the access key id and secret (${setting("s3.accessKeyId")}, ${setting("s3.secretAccessKey")}), or unset them to use the default AWS credential chain.`,
    });
  }
  if (name === "AccessDenied" || name === "AllAccessDisabled" || status === 403) {
    return new LdsError("destination_access_denied", `Access denied to ${where} while ${ctx.action}.`, {
      hint: "Allow s3:PutObject, s3:GetObject, s3:ListBucket, s3:DeleteObject and s3:AbortMultipartUpload on the bucket and prefix.",
    });
  }
  if (name === "PermanentRedirect" || name === "AuthorizationHeaderMalformed" || name === "IllegalLocationConstraintException" || status === 301) {
    return new LdsError("wrong_region", `The bucket "${ctx.bucket}" is not in region ${ctx.region} (while ${ctx.action}).`, {
      hint: `Set the bucket's region (${setting("s3.region")}).`,
    });
  }
  if (netCode && /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNRESET|EPIPE|EHOSTUNREACH|ENETUNREACH|UND_ERR/.test(netCode)) {
    return new LdsError("destination_unreachable", `Cannot reach ${where} (${netCode}) while ${ctx.action}.`, {
      hint: `Check the endpoint (${setting("s3.endpoint")}) and the network, then try again.`,
    });
  }
  if (name === "TimeoutError" || name === "RequestTimeout") {
    return new LdsError("destination_unreachable", `${where} timed out while ${ctx.action}.`, {
      hint: "Check the endpoint and the network, then try again.",
    });
  }
  return new LdsError("destination_error", `${where} failed while ${ctx.action}: ${name || "error"}${status ? ` (HTTP ${status})` : ""}.`, {
    hint: "Check the S3 settings and the service's status, then try again.",
  });
}
