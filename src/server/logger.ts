import pino, { type Logger } from "pino";

/** JSON logs on stdout; secrets are redacted should a header or a config body ever be logged. */
export function createLogger(level = "info"): Logger {
  return pino({
    level,
    redact: {
      paths: ["req.headers.authorization", "req.headers.cookie", "*.gitToken", "*.secretAccessKey", "*.password"],
      censor: "[redacted]",
    },
  });
}
