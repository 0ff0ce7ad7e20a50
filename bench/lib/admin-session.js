/**
 * Log in to a bench server's admin API and answer a caller of it: `admin(method, route, body)` sends the session
 * cookie and answers the parsed JSON, throwing on any status other than 2xx.
 */
export async function adminSession(url, username, password) {
  const login = await fetch(`${url}/api/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username, password }) });
  const cookie = login.headers.get("set-cookie")?.split(";")[0];
  if (!cookie) throw new Error(`login failed: ${login.status}`);
  return async (method, route, body) => {
    const response = await fetch(url + route, { method, headers: { cookie, "content-type": "application/json" }, body: body && JSON.stringify(body) });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${text}`);
    return JSON.parse(text);
  };
}
