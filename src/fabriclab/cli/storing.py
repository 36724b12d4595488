"""`--store` on the commands that measure (run, check, congestion, tune): their
documents added to the results store as they finish (docs/history.md).

The store is opened (created or migrated) before anything launches, so a bad
URL, a foreign or newer store is one line and exit 2 with nothing run; the
documents are written first and added after, so a store that fails then
loses nothing: the line says how to add them later (`history add`). Without
--store, FABRICLAB_STORE names the store; with neither, nothing is added."""

from __future__ import annotations

import os
import sys

ENV = "FABRICLAB_STORE"


def add_options(add) -> None:
    """--store and --cluster, for a command's parser or group (add: letters.adder)."""
    add("--store", metavar="URL", help="Add the documents to this results store as they finish: a SQLite file "
                                       "or a postgresql:// URL (docs/history.md). Default: $FABRICLAB_STORE, "
                                       "else none.")
    add("--cluster", metavar="NAME", help="The cluster's name in the store. Default: $SLURM_CLUSTER_NAME, "
                                          "the testbed's name, else the first host's.")


def shown_argv(argv: list) -> list:
    """The command line as documents record it: a store URL's password hidden (`--store URL` and
    `--store=URL` alike), since documents travel and are stored."""
    from ..store.url import redacted
    out = []
    for a in argv:
        flag, eq, value = a.partition("=") if a.startswith("--") else ("", "", a)
        out.append(flag + eq + redacted(value) if "://" in value else a)
    return out


def opened(args):
    """The store the documents go to, opened and checked now (before any launch), or None."""
    url = getattr(args, "store", None) or os.environ.get(ENV)
    return open_url(url, create=True) if url else None


def open_url(url: str, create: bool):
    """The store at url, with a warning on stderr where a SQLite file lies on a network file
    system (SQLite's locking is unreliable there: sqlite.org/faq.html#q5)."""
    from ..store.backend import open_store
    from ..store.url import network_warning, parse
    u = parse(url)
    if u.kind == "sqlite":
        warning = network_warning(u.path if u.path.exists() else u.path.parent)
        if warning:
            print(f"fabriclab: {warning}", file=sys.stderr)
    return open_store(url, create=create)


def keep(store, paths, args) -> int:
    """Each written document added to `store` (None: nothing), which is closed then; a failure is
    a line on stderr, never the loss of a document. Returns how many were added."""
    if store is None:
        return 0
    from ..errors import FabriclabError
    from ..store.add import add
    from ..store.ingest import rows
    cluster = getattr(args, "cluster", None) or os.environ.get("SLURM_CLUSTER_NAME")
    added = 0
    for path in paths:
        if not path or not os.path.isfile(path):
            continue
        try:
            result = add(store, rows(str(path), cluster=cluster))
        except (FabriclabError, OSError) as e:
            print(f"fabriclab: {path} not added to the store {store.url}: {e}; "
                  f"`fabriclab history add {path}` adds it later", file=sys.stderr)
            continue
        added += bool(result.added)
    if added:
        print(f"fabriclab: {added} document{'s' if added > 1 else ''} added to the store {store.url}",
              file=sys.stderr)
    store.close()
    return added
