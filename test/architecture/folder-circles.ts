/**
 * Circles of any length in the graph of folders: its strongly connected components of two or more folders
 * (Tarjan's algorithm). A folder importing itself is no circle.
 */
export interface FolderCircle {
  /** The folders of the component, sorted. */
  folders: string[];
  /** Its shortest circle, each step with a file that makes it: "a → b (a/x.ts) → a (b/y.ts)". */
  shortest: string;
}

export function folderCircles(edges: Array<{ from: string; to: string; file: string }>): FolderCircle[] {
  const next = new Map<string, Map<string, string>>();
  for (const { from, to, file } of edges) {
    if (from === to) continue;
    if (!next.has(from)) next.set(from, new Map());
    if (!next.has(to)) next.set(to, new Map());
    const targets = next.get(from)!;
    if (!targets.has(to) || file < targets.get(to)!) targets.set(to, file);
  }

  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const connect = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const to of next.get(node)!.keys()) {
      if (!index.has(to)) {
        connect(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) components.push(component.sort());
    }
  };
  for (const node of [...next.keys()].sort()) if (!index.has(node)) connect(node);

  return components.map((folders) => ({ folders, shortest: shortestCircle(folders, next) })).sort((a, b) => a.folders.join().localeCompare(b.folders.join()));
}

/**
 * The shortest circle through the component (the first folder's in name order on a tie), as
 * "a → b (a/file.ts) → a (b/file.ts)": one place to cut, and a stable name for the baseline, where a list of
 * every edge of a large component would change with each import anywhere in it.
 */
function shortestCircle(folders: string[], next: Map<string, Map<string, string>>): string {
  let best: string[] | undefined;
  for (const start of folders) {
    // Breadth-first from start's successors back to start, inside the component.
    const before = new Map<string, string>();
    const queue = [start];
    for (let i = 0; i < queue.length && !before.has(start); i++) {
      for (const to of [...next.get(queue[i]!)!.keys()].sort()) {
        if (!folders.includes(to) || before.has(to)) continue;
        before.set(to, queue[i]!);
        queue.push(to);
      }
    }
    const path = [start];
    for (let at = before.get(start)!; at !== start; at = before.get(at)!) path.unshift(at);
    path.unshift(start);
    if (!best || path.length < best.length) best = path;
  }
  return best!.map((folder, i) => (i === 0 ? folder : `${folder} (${next.get(best![i - 1]!)!.get(folder)})`)).join(" → ");
}
