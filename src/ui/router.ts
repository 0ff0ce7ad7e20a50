import { useEffect, useState } from "preact/hooks";

/** The dashboard's pages live under /dashboard/; the server answers index.html for all of them. */
export const BASE = "/dashboard";

export function currentPage(): string {
  const rest = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : "/";
  return rest.replace(/\/+$/, "") || "/";
}

export function navigate(page: string): void {
  history.pushState(null, "", BASE + (page === "/" ? "/" : page));
  dispatchEvent(new PopStateEvent("popstate"));
}

export function usePage(): string {
  const [page, setPage] = useState(currentPage());
  useEffect(() => {
    const update = () => setPage(currentPage());
    addEventListener("popstate", update);
    return () => removeEventListener("popstate", update);
  }, []);
  return page;
}

/** Links inside the dashboard move without reloading the page. */
export function onLinkClick(event: MouseEvent): void {
  const link = (event.target as HTMLElement).closest("a");
  if (!link || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || link.target) return;
  const url = new URL(link.href);
  if (url.origin !== location.origin || !url.pathname.startsWith(BASE) || link.hasAttribute("download")) return;
  event.preventDefault();
  navigate((url.pathname.slice(BASE.length) || "/") + url.search);
}
