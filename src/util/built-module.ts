/**
 * The URL of a sibling module as a worker thread can load it. A thread needs plain JavaScript: under the test
 * runner the caller runs from src/*.ts, so the thread loads the built copy in dist/ (npm test builds first).
 */
export function builtModule(callerUrl: string, relative: string): URL {
  const url = new URL(relative, callerUrl);
  if (!callerUrl.endsWith(".ts")) return url;
  // The last /src/: a checkout may itself live below a folder called src.
  const at = url.href.lastIndexOf("/src/");
  return new URL(`${url.href.slice(0, at)}/dist/${url.href.slice(at + "/src/".length)}`);
}
