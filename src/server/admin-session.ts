import "@fastify/cookie";
import type { FastifyReply, FastifyRequest } from "fastify";
import { LdsError } from "../errors.js";
import type { Store } from "../store/store.js";

export const SESSION_COOKIE = "lds_session";

declare module "fastify" {
  interface FastifyRequest {
    admin?: { id: number; username: string };
  }
}

/** onRequest hook (before body parsing and validation, so no 400 leaks to the unauthenticated) of every admin endpoint: a valid, unexpired session cookie, else 401 with our error body. */
export function requireAdmin(store: Store) {
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    const token = request.cookies[SESSION_COOKIE];
    const admin = token ? await store.admins.sessionAdmin(token) : undefined;
    if (!admin) {
      throw new LdsError("not_authenticated", token ? "The admin session has expired or was logged out." : "This endpoint needs an admin session.", {
        hint: "POST /api/auth/login with {username, password} to get one.",
      });
    }
    request.admin = admin;
  };
}
