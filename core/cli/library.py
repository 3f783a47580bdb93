"""`foldscope library list|remove|prune`: what the library holds, and taking out what is no longer needed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from foldscope.core.model.session import ReadError

COLUMNS = (
    ("id", "the session's id in the library (what remove takes)"),
    ("format", "the file's format"),
    ("messages", "messages in its full record"),
    ("size", "the source file's size when imported"),
    ("imported", "when it was imported (UTC)"),
    ("file", "the source file"),
)


def register(subparsers) -> None:
    library = subparsers.add_parser("library", help="list the library's sessions, remove some, prune the rest")
    actions = library.add_subparsers(dest="library_action", metavar="ACTION")
    from foldscope.core.cli.output import columns_help

    listing = actions.add_parser(
        "list",
        help="the sessions in the library and its size",
        **columns_help("The library's sessions, a row each, after its file and size.", COLUMNS),
    )
    remove = actions.add_parser("remove", help="remove sessions by id (with their messages no other session holds)")
    remove.add_argument("ids", metavar="ID", type=int, nargs="+")
    prune = actions.add_parser(
        "prune", help="remove sessions whose source is gone or replaced by a newer version, and messages no session holds"
    )
    for parser in (listing, remove, prune):
        parser.add_argument("--db", metavar="PATH", help="the library (default: FOLDSCOPE_DB, else the data folder's)")
        parser.add_argument("--json", action="store_true", help="print JSON")
    for parser in (remove, prune):
        parser.add_argument("--dry-run", action="store_true", help="say what would go; change nothing")
    listing.set_defaults(run=run_list, format=format_list)
    remove.set_defaults(run=run_remove, format=format_removed)
    prune.set_defaults(run=run_prune, format=format_removed)
    library.set_defaults(run=lambda args: library.print_help() or 2)


def _open(args):
    from foldscope.core.store.library import Library

    return Library(args.db)


def _session(row: dict[str, Any]) -> dict[str, Any]:
    return {key: row.get(key) for key in ("id", "source", "format", "model", "messages", "requests", "source_bytes", "imported_at")} | (
        {"why": row["why"]} if "why" in row else {}
    )


def run_list(args) -> dict[str, Any]:
    from foldscope.core.store.library import Library
    from foldscope.core.store.library_file import default_path

    if not Library.exists(args.db):  # a listing writes nothing: no library is created to list it empty
        return {"library": str(args.db or default_path()), "size": None, "sessions": []}
    with _open(args) as library:
        return {"library": str(library.path), "size": library.size(), "sessions": [_session(row) for row in library.list_sessions()]}


def run_remove(args) -> dict[str, Any]:
    with _open(args) as library:
        rows = {row["id"]: row for row in library.list_sessions()}
        missing = [i for i in args.ids if i not in rows]
        if missing:
            raise ReadError(
                str(library.path),
                "",
                f"no session {', '.join(map(str, missing))} in the library (`foldscope library list` shows their ids)",
            )
        chosen = [_session({**rows[i], "why": "asked for"}) for i in dict.fromkeys(args.ids)]
        before = library.size()
        if args.dry_run:
            return {"library": str(library.path), "dry_run": True, "sessions": chosen, "size_before": before, "size_after": None}
        removed = library.remove_sessions(args.ids)
        # Removal frees pages for later imports without compacting the file (prune does), and the removal itself
        # passes through the write-ahead log: the size on disk may not fall, and the text says why.
        return {
            "library": str(library.path),
            "dry_run": False,
            "sessions": chosen,
            "bodies": removed["bodies"],
            "size_before": before,
            "size_after": library.size(),
            "compacted": False,
        }


def run_prune(args) -> dict[str, Any]:
    with _open(args) as library:
        result = library.prune(dry_run=args.dry_run)
        return {"library": str(library.path), **result, "sessions": [_session(row) for row in result["sessions"]]}


def human_size(size: int | None) -> str:
    if size is None:
        return "-"
    value = float(size)
    for unit in ("bytes", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{int(value):,} bytes" if unit == "bytes" else f"{value:,.1f} {unit}"
        value /= 1024
    return ""


def _sessions(n: int) -> str:
    return f"{n:,} session" if n == 1 else f"{n:,} sessions"


def format_list(result: dict[str, Any]) -> str:
    if result["size"] is None:
        return f"{result['library']}: no library there yet (foldscope makes it when a session is opened with it)"
    lines = [f"{result['library']}: {_sessions(len(result['sessions']))}, {human_size(result['size'])}"]
    for row in result["sessions"]:
        name = row["source"] or "(no file)"
        lines.append(
            f"{row['id']:>5}  {row['format'] or '-':<12} {row['messages'] or 0:>7,} messages  "
            f"{human_size(row['source_bytes']):>10}  {row['imported_at'] or ''}  {name}"
        )
    return "\n".join(lines)


def format_removed(result: dict[str, Any]) -> str:
    verb = "would remove" if result["dry_run"] else "removed"
    lines = [
        f"{result['library']}: {verb} {_sessions(len(result['sessions']))}"
        + (f" and {result['bodies']:,} stored messages no session holds" if result.get("bodies") else "")
    ]
    lines += [f"{row['id']:>5}  {Path(row['source'] or '(no file)')}  ({row['why']})" for row in result["sessions"]]
    if result.get("size_after") is not None:
        lines.append(f"size: {human_size(result['size_before'])} -> {human_size(result['size_after'])}")
        if result.get("compacted") is False and result["size_after"] >= result["size_before"]:
            lines.append("  the space freed is reused by later imports; `foldscope library prune` compacts the file")
    return "\n".join(lines)
