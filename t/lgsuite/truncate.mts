// t/lg_api_suite.t puts this truncate() in place of the suite's
// (tests/utils.mts), which posts to a truncate hook of LangGraph's JS dev
// server only.  This one clears what it can through the public
// API, every failure ignored: threads (their runs and checkpoints with
// them), the assistants that are not the system ones, the store's items.
export async function truncate(
  apiUrl: string,
  options:
    | {
        runs?: boolean;
        threads?: boolean;
        assistants?: boolean;
        store?: boolean;
        checkpoint?: boolean;
      }
    | "all"
) {
  const flags =
    options === "all"
      ? {
          runs: true,
          threads: true,
          assistants: true,
          store: true,
          checkpoint: true,
        }
      : options;

  // the answer's JSON (null when empty), undefined when it failed
  const call = async (method: string, path: string, body?: unknown) => {
    try {
      const res = await fetch(`${apiUrl}${path}`, {
        method,
        headers:
          body === undefined ? {} : { "Content-Type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      if (!res.ok) return undefined;
      return text ? JSON.parse(text) : null;
    } catch {
      return undefined;
    }
  };

  // a page at a time, until a page is empty or nothing of it went
  const clear = async (
    page: () => Promise<any[] | undefined>,
    remove: (item: any) => Promise<unknown>
  ) => {
    for (let pass = 0; pass < 20; pass++) {
      const items = await page();
      if (!Array.isArray(items) || items.length === 0) return;
      const done = await Promise.all(items.map(remove));
      if (done.every((d) => d === undefined)) return;
    }
  };

  if (flags.threads || flags.runs || flags.checkpoint) {
    await clear(
      () => call("POST", "/threads/search", { limit: 100 }),
      (t) => call("DELETE", `/threads/${t.thread_id}`)
    );
  }

  if (flags.assistants) {
    await clear(
      async () => {
        const all = await call("POST", "/assistants/search", { limit: 100 });
        if (!Array.isArray(all)) return undefined;
        return all.filter((a) => a?.metadata?.created_by !== "system");
      },
      (a) => call("DELETE", `/assistants/${a.assistant_id}`)
    );
  }

  if (flags.store) {
    await clear(
      async () =>
        (await call("POST", "/store/items/search", {
          namespace_prefix: [],
          limit: 100,
        }))?.items,
      (i) =>
        call("DELETE", "/store/items", { namespace: i.namespace, key: i.key })
    );
  }
}
