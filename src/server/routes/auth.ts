import type { FastifyPluginAsync } from "fastify";
import { verifyPassword } from "../../admin/passwords.js";
import { LdsError } from "../../errors.js";
import type { OpenVolume } from "../../volume/open-volume.js";
import { requireAdmin, SESSION_COOKIE } from "../admin-session.js";
import { createRateLimiter } from "../rate-limiter.js";
import type { AdminSession, LoginAnswer, LogoutAnswer } from "../api-types.js";

export interface AuthRouteOptions {
  volume: OpenVolume;
  sessionTtlSeconds: number;
  /** Login attempts allowed per client address and minute. */
  loginAttemptsPerMinute: number;
}

/** POST /api/auth/login, GET /api/auth/session and POST /api/auth/logout (docs/admin-api.md). */
export const authRoutes: FastifyPluginAsync<AuthRouteOptions> = async (app, { volume, sessionTtlSeconds, loginAttemptsPerMinute }) => {
  const perAccount = createRateLimiter(volume.store.requestWindows, "logins");
  app.post<{ Body: { username: string; password: string } }>(
    "/api/auth/login",
    {
      config: { rateLimit: { max: loginAttemptsPerMinute, timeWindow: "1 minute" } },
      schema: {
        body: {
          type: "object",
          additionalProperties: false,
          required: ["username", "password"],
          properties: { username: { type: "string", minLength: 1, maxLength: 64 }, password: { type: "string", minLength: 1, maxLength: 1024 } },
        },
      },
    },
    async (request, reply): Promise<LoginAnswer> => {
      // Per account too: behind a trusted proxy the address (X-Forwarded-For) is the client's to choose.
      await perAccount.hit(`login:${request.body.username.toLowerCase()}`, loginAttemptsPerMinute, reply);
      const admin = await volume.store.admins.find(request.body.username);
      // Always run scrypt, also for unknown users, so that timing does not reveal which usernames exist.
      const ok = await verifyPassword(request.body.password, admin?.passwordHash);
      if (!admin || !ok) {
        request.log.warn({ username: request.body.username }, "admin login failed");
        throw new LdsError("login_failed", "Wrong username or password.");
      }
      const session = await volume.store.admins.createSession(admin.id, sessionTtlSeconds);
      reply.setCookie(SESSION_COOKIE, session.token, {
        httpOnly: true,
        sameSite: "strict",
        secure: request.protocol === "https",
        path: "/",
        expires: session.expiresAt,
      });
      request.log.info({ username: admin.username }, "admin logged in");
      return { username: admin.username, expiresAt: session.expiresAt.toISOString() };
    },
  );

  // Who is signed in: the dashboard asks first, and an expired session sends it to sign-in.
  app.get("/api/auth/session", { onRequest: requireAdmin(volume.store) }, async (request): Promise<AdminSession> => ({ username: request.admin!.username }));

  app.post("/api/auth/logout", async (request, reply): Promise<LogoutAnswer> => {
    const token = request.cookies[SESSION_COOKIE];
    if (token) await volume.store.admins.deleteSession(token);
    reply.clearCookie(SESSION_COOKIE, { path: "/" });
    return { loggedOut: true };
  });
};
